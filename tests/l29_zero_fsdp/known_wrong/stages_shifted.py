"""Classic bug: stages off by one (stage 1 already shards the gradients, stage 2 the weights)."""

MODULE = "zero"
REJECTED_BY = {"zero_memory_per_gpu": ["correctness"]}

_correct_zero_memory_per_gpu = zero_memory_per_gpu


def zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    shifted = min(stage + 1, 3) if stage in (1, 2) else stage
    return _correct_zero_memory_per_gpu(n_params, n_gpus, shifted, weight_bytes, grad_bytes, optimizer_bytes)
