"""Classic bug: returns GB floats (bytes / 1e9) instead of exact bytes."""

MODULE = "zero"
REJECTED_BY = {"zero_memory_per_gpu": ["correctness"]}

_correct_zero_memory_per_gpu = zero_memory_per_gpu


def zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    return _correct_zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes, grad_bytes, optimizer_bytes) / 1e9
