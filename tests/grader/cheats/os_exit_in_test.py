"""Attack: os._exit(0) inside softmax_fused, i.e. in the middle of a test."""

ZERO = ["softmax_fused"]


def softmax_fused(x):
    import os  # here, not at module level (R3.3)

    os._exit(0)
