"""Attack (refused names reached indirectly): getattr under another name, so no call is spelled
`getattr(...)`, and the private names built from pieces: switch the guard off, call torch.softmax."""

ZERO = ["softmax_fused"]
MESSAGE = "may not use"


def softmax_fused(x):
    get = getattr
    c = get(torch, "".join(["_", "C"]))
    off = get(c, "Disable" + "TorchFunction")
    with off():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
