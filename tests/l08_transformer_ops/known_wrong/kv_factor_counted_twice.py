"""Classic bug: K/V factor counted twice, 2 × 2 × L × H_kv × d × bytes (L40/L41's 655 360 B/token for 70B)."""

MODULE = "transformer_ops"
REJECTED_BY = {"kv_bytes_per_token": ["correctness"]}

_correct_kv = kv_bytes_per_token


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, elem_bytes=2):
    return 2 * _correct_kv(n_layers, n_kv_heads, head_dim, elem_bytes)
