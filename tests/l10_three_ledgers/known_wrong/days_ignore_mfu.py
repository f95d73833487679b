"""Classic bug: days at the peak, the MFU argument validated but never used (a 2× optimistic plan at MFU 0.5)."""

MODULE = "ledgers"
REJECTED_BY = {"training_days": ["correctness"]}

_correct_days = training_days


def training_days(n_params, n_tokens, n_gpus, peak_flops, mfu):
    return _correct_days(n_params, n_tokens, n_gpus, peak_flops, mfu) * mfu
