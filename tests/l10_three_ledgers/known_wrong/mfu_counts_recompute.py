"""Classic bug: MFU charged 8N per token (the recompute forward): that is hardware FLOPs utilization, not MFU."""

MODULE = "ledgers"
REJECTED_BY = {"mfu": ["correctness"]}

_correct_mfu = mfu


def mfu(tokens_per_s, n_params, n_gpus, peak_flops):
    return _correct_mfu(tokens_per_s, n_params, n_gpus, peak_flops) * 8 / 6
