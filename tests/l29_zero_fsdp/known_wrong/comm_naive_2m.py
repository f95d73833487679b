"""Classic bug: the N → ∞ form 2M / 3M used for every N (no (N−1)/N ring factor; 280 GB instead of 245 GB)."""

MODULE = "zero"
REJECTED_BY = {"zero_comm_bytes_per_gpu": ["correctness"]}


def zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2):
    check_int("n_gpus", n_gpus, 1)
    _check_stage(stage)
    n = check_int("n_params", n_params)
    w, g = check_int("weight_bytes", weight_bytes), check_int("grad_bytes", grad_bytes)
    return 2 * n * g if stage == 0 else n * g + (2 if stage == 3 else 1) * n * w
