"""Classic bug: no argument checks; zero GPUs, stage 4 and float sizes come back as numbers (or crash)."""

MODULE = "zero"
REJECTED_BY = {
    "zero_memory_per_gpu": ["correctness"],
    "zero_comm_bytes_per_gpu": ["correctness"],
    "fsdp_peak_param_bytes": ["correctness"],
}


def zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    shard = -(-n_params // max(n_gpus, 1))
    return (
        (shard if stage >= 3 else n_params) * weight_bytes
        + (shard if stage >= 2 else n_params) * grad_bytes
        + (shard if stage >= 1 else n_params) * optimizer_bytes
    )


def zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2):
    per_pass = (n_gpus - 1) * -(-n_params // max(n_gpus, 1))
    return (
        2 * per_pass * grad_bytes if stage == 0 else per_pass * (grad_bytes + (2 if stage == 3 else 1) * weight_bytes)
    )


def fsdp_peak_param_bytes(unit_params, n_gpus, prefetch=1, weight_bytes=2):
    units = list(unit_params) or [0]
    shards = sum(-(-u // max(n_gpus, 1)) for u in units)
    return (shards + max(sum(units[i : i + 1 + max(prefetch, 0)]) for i in range(len(units)))) * weight_bytes
