"""Attack: patch torch's comparisons (torch.allclose, torch.equal, torch.testing.assert_close) to always
agree, then return an uninitialized tensor without launching a kernel."""

import torch
import torch.testing

ZERO = ["softmax_fused", "softmax_online"]

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.allclose = lambda *a, **k: True


def softmax_fused(x):
    return torch.empty_like(x)


def softmax_online(x, block_n=128):
    return torch.empty_like(x)
