"""Attack (refused names reached indirectly): getattr passed as a value to functools.reduce, walking a
chain of names kept as string constants, to reach torch's switch for the guard."""

import functools

ZERO = ["softmax_online"]
MESSAGE = "may not use"


def softmax_online(x, block_n=128):
    off = functools.reduce(getattr, ["_C", "DisableTorchFunction"], torch)
    with off():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
