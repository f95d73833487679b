"""Classic bug: returns GiB floats instead of exact bytes (GB vs GiB vs bytes confusion)."""

MODULE = "ledger"
REJECTED_BY = {"training_memory": ["correctness"], "kv_cache_bytes": ["correctness"]}

_correct_training_memory, _correct_kv_cache_bytes = training_memory, kv_cache_bytes


def training_memory(n_params, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    parts = _correct_training_memory(n_params, weight_bytes, grad_bytes, optimizer_bytes)
    return {k: v / 2**30 for k, v in parts.items()}


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    return _correct_kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes) / 2**30
