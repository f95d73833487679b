"""Classic bug: the cluster's tokens/s held against one GPU's peak (n_gpus forgotten)."""

MODULE = "ledgers"
REJECTED_BY = {"mfu": ["correctness"]}

_correct_mfu = mfu


def mfu(tokens_per_s, n_params, n_gpus, peak_flops):
    return _correct_mfu(tokens_per_s, n_params, n_gpus, peak_flops) * n_gpus
