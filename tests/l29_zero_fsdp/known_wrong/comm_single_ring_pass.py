"""Classic bug: an all-reduce counted as (N−1)/N·M, one ring pass instead of two."""

MODULE = "zero"
REJECTED_BY = {"zero_comm_bytes_per_gpu": ["correctness"]}

_correct_zero_comm_bytes_per_gpu = zero_comm_bytes_per_gpu


def zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2):
    return _correct_zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes, grad_bytes) // 2
