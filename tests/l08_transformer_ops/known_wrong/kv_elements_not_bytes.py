"""Classic bug: elements counted, not bytes: elem_bytes accepted and ignored."""

MODULE = "transformer_ops"
REJECTED_BY = {"kv_bytes_per_token": ["correctness"]}

_correct_kv = kv_bytes_per_token


def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, elem_bytes=2):
    return _correct_kv(n_layers, n_kv_heads, head_dim, elem_bytes) // elem_bytes
