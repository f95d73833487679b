"""Course erratum #4 (L40/L41): 2 × 2 × L × H × D × bytes, the K/V factor counted twice (655,360 B/token for 70B)."""

MODULE = "ledger"
REJECTED_BY = {"kv_cache_bytes": ["correctness"]}

_correct_kv_cache_bytes = kv_cache_bytes


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    return 2 * _correct_kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes)
