"""Classic bug: shard = Ψ // N (floor): the remainder's parameters belong to no GPU."""

MODULE = "zero"
REJECTED_BY = {
    "zero_memory_per_gpu": ["correctness"],
    "zero_comm_bytes_per_gpu": ["correctness"],
    "fsdp_peak_param_bytes": ["correctness"],
}


def shard_params(n_params, n_gpus):
    return n_params // n_gpus
