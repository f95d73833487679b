"""Attack: os._exit(0) inside softmax_fused, i.e. in the middle of a test."""

import os

ZERO = ["softmax_fused"]


def softmax_fused(x):
    os._exit(0)
