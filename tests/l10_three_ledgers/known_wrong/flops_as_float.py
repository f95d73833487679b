"""Classic bug: FLOPs computed in floating point (6.0 · N · D): inexact above 2⁵³ and not an int."""

MODULE = "ledgers"
REJECTED_BY = {"training_flops": ["correctness"]}

_correct_training_flops = training_flops


def training_flops(n_params, n_tokens, recompute=False):
    return float(_correct_training_flops(n_params, n_tokens, recompute))
