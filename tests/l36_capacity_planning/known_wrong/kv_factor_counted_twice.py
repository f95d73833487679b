"""Course erratum #4: the K/V factor 2 counted twice (655,360 B/token for 70B, 81,920 B/GPU at TP8)."""

MODULE = "capacity"
REJECTED_BY = {"kv_bytes_per_token_per_gpu": ["correctness"]}

_correct_kv = kv_bytes_per_token_per_gpu


def kv_bytes_per_token_per_gpu(n_layers, n_kv_heads, head_dim, tp, elem_bytes=2):
    return 2 * _correct_kv(n_layers, n_kv_heads, head_dim, tp, elem_bytes)
