"""Classic bug: gpu_memory_utilization applied to what the weights leave, not to the whole GPU."""

MODULE = "capacity"
REJECTED_BY = {"kv_pool_bytes": ["correctness"]}

_correct_pool = kv_pool_bytes


def kv_pool_bytes(gpu_bytes, mem_util, weight_bytes, runtime_bytes):
    _correct_pool(gpu_bytes, mem_util, weight_bytes, runtime_bytes)
    return math.floor((gpu_bytes - weight_bytes - runtime_bytes) * mem_util)
