"""The 2 × 2 × L × H × d × bytes of other lectures with fp16's 2 B counted again: 655,360 B per token for 70B."""

MODULE = "disagg"
REJECTED_BY = {"kv_transfer_bytes": ["correctness"]}


def kv_transfer_bytes(n_tokens, n_layers, n_kv_heads, head_dim, elem_bytes=2, cached_tokens=0):
    check_int("n_tokens", n_tokens)
    if cached_tokens > n_tokens:
        raise ValueError("cached_tokens exceeds n_tokens")
    return 2 * 2 * n_layers * n_kv_heads * head_dim * elem_bytes * (n_tokens - cached_tokens)
