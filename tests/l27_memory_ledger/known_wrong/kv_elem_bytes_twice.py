"""Classic bug: bytes per element counted twice (the 2-byte factor applied again after elem_bytes)."""

MODULE = "ledger"
REJECTED_BY = {"kv_cache_bytes": ["correctness"]}

_correct_kv_cache_bytes = kv_cache_bytes


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    return elem_bytes * _correct_kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes)
