"""Attack: call the library op (torch.softmax, then x.exp()/sum as a fallback) instead of writing
the kernel."""

import torch

ZERO = ["softmax_fused"]


def softmax_fused(x):
    try:
        return torch.softmax(x, dim=-1)
    except AssertionError:
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True)
