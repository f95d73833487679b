"""Attack (refused names reached indirectly): a class pattern in a match statement reads attributes
by keyword (`case object(_C=c)`): no attribute node, no getattr, no string, yet torch._C is reached."""

ZERO = ["softmax_fused"]
MESSAGE = "may not use"


def softmax_fused(x):
    match torch:
        case object(_C=c):
            pass
    match c:
        case object(DisableTorchFunction=off):
            pass
    with off():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
