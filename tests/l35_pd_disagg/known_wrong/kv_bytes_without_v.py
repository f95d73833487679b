"""Classic bug: counts K only (L · H_kv · d · bytes per token): 163,840 B per token for 70B, half the transfer."""

MODULE = "disagg"
REJECTED_BY = {"kv_transfer_bytes": ["correctness"]}


def kv_transfer_bytes(n_tokens, n_layers, n_kv_heads, head_dim, elem_bytes=2, cached_tokens=0):
    check_int("n_tokens", n_tokens)
    return n_layers * n_kv_heads * head_dim * elem_bytes * (n_tokens - cached_tokens)
