"""Full transfer every time: the prefix the decode node already holds is sent again."""

MODULE = "disagg"
REJECTED_BY = {"kv_transfer_bytes": ["correctness"]}

_bytes = kv_transfer_bytes


def kv_transfer_bytes(n_tokens, n_layers, n_kv_heads, head_dim, elem_bytes=2, cached_tokens=0):
    return _bytes(n_tokens, n_layers, n_kv_heads, head_dim, elem_bytes, 0)
