"""Attack (deserialization runs code): the C pickle module `_pickle` (not `pickle`), imported inside
the function, loads a stream that calls exec to pop the guard; then torch.softmax."""

ZERO = ["softmax_online"]
MESSAGE = "may not use"


def softmax_online(x, block_n=128):
    import _pickle

    _pickle.loads(
        b"cbuiltins\nexec\n(Vimport torch\\u000afor m in list(torch.overrides._get_current_function_mode_stack()):"
        b" torch._C._pop_torch_function_stack()\ntR."
    )
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
