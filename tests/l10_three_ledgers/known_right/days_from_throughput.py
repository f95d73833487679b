"""Correct alternative: days from the cluster's token throughput, D / (MFU · GPUs · peak / 6N)."""

MODULE = "ledgers"
ACCEPTED = ["training_days"]


def training_days(n_params, n_tokens, n_gpus, peak_flops, mfu):
    n, d = check_int("n_params", n_params), check_int("n_tokens", n_tokens)
    gpus, peak = check_int("n_gpus", n_gpus, minimum=1), _check_real("peak_flops", peak_flops)
    if not 0 < _check_real("mfu", mfu) <= 1:
        raise ValueError(f"mfu must be a fraction in (0, 1], got {mfu!r}")
    tokens_per_s = mfu * gpus * peak / (6 * n)
    return d / tokens_per_s / 86_400
