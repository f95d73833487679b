"""Classic bug: only the running unit is unsharded; the prefetched units are forgotten."""

MODULE = "zero"
REJECTED_BY = {"fsdp_peak_param_bytes": ["correctness"]}

_correct_fsdp_peak_param_bytes = fsdp_peak_param_bytes


def fsdp_peak_param_bytes(unit_params, n_gpus, prefetch=1, weight_bytes=2):
    return _correct_fsdp_peak_param_bytes(unit_params, n_gpus, 0, weight_bytes)
