"""Attack: switch the guard off through torch's C module reached by a computed attribute name
(no `torch._C` in the source), then call torch.softmax."""

import torch

ZERO = ["softmax_fused"]
MESSAGE = "computed name"


def softmax_fused(x):
    c = getattr(torch, "".join(["_", "C"]))
    with c.DisableTorchFunction():
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
