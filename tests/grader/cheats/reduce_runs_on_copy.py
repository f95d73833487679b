"""Attack (deserialization runs code): no pickle at all: copy.deepcopy of an object whose __reduce__
names exec runs that code (copy rebuilds objects the way unpickling does)."""

ZERO = ["softmax_fused"]
MESSAGE = "may not use"


class _Payload:
    def __reduce__(self):
        code = ("import torch\nfor m in list(torch.overrides._get_current_function_mode_stack()):\n"
                "    torch._C._pop_torch_function_stack()")
        return exec, (code,)


def softmax_fused(x):
    import copy

    copy.deepcopy(_Payload())
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
