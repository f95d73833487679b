"""Classic bug: 2ND, the forward pass only (inference FLOPs), for training; 4ND with recompute."""

MODULE = "ledgers"
REJECTED_BY = {"training_flops": ["correctness"]}

_correct_training_flops = training_flops


def training_flops(n_params, n_tokens, recompute=False):
    return _correct_training_flops(n_params, n_tokens, recompute) // 3
