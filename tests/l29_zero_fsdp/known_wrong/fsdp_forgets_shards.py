"""Classic bug: the FSDP peak counts the unsharded units but not the shards every GPU keeps."""

MODULE = "zero"
REJECTED_BY = {"fsdp_peak_param_bytes": ["correctness"]}

_correct_fsdp_peak_param_bytes = fsdp_peak_param_bytes


def fsdp_peak_param_bytes(unit_params, n_gpus, prefetch=1, weight_bytes=2):
    total = _correct_fsdp_peak_param_bytes(unit_params, n_gpus, prefetch, weight_bytes)
    return total - sum(shard_params(u, n_gpus) for u in unit_params) * weight_bytes
