"""Classic bug: ZeRO-2 without gradient sharding (stage 2 computed like stage 1: 385 GB instead of 262.5 GB)."""

MODULE = "zero"
REJECTED_BY = {"zero_memory_per_gpu": ["correctness"]}

_correct_zero_memory_per_gpu = zero_memory_per_gpu


def zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    stage = 1 if stage == 2 else stage
    return _correct_zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes, grad_bytes, optimizer_bytes)
