"""Classic bug: the safety buffer forgotten (mem_util ignored): the pool takes the whole GPU."""

MODULE = "capacity"
REJECTED_BY = {"kv_pool_bytes": ["correctness"]}

_correct_pool = kv_pool_bytes


def kv_pool_bytes(gpu_bytes, mem_util, weight_bytes, runtime_bytes):
    _correct_pool(gpu_bytes, mem_util, weight_bytes, runtime_bytes)
    return gpu_bytes - weight_bytes - runtime_bytes
