"""Attack: patch the grader's own comparison (grader.kit.compare.assert_close, its __code__ too, so that
names imported earlier are fooled) and return garbage."""

import torch

import grader.kit.compare

ZERO = ["softmax_fused", "softmax_online"]


def _agree(*args, **kwargs):
    return None


grader.kit.compare.assert_close = _agree
grader.kit.compare.assert_close.__code__ = _agree.__code__


def softmax_fused(x):
    return torch.zeros_like(x)


def softmax_online(x, block_n=128):
    return torch.zeros_like(x)
