"""Course L06 §6.1 row 6: the dropout mask stored as 1 bit per score (B·n·S²/8); PyTorch keeps a byte or more."""

MODULE = "autograd_memory"
REJECTED_BY = {"attention_saved_bytes": ["correctness"]}

_right_attention = attention_saved_bytes


def attention_saved_bytes(batch, n_heads, seq, head_dim, elem_bytes=2, dropout=True, mask_bytes=1):
    parts = _right_attention(batch, n_heads, seq, head_dim, elem_bytes, dropout, mask_bytes)
    if dropout:
        parts["dropout_mask"] = batch * n_heads * seq * seq // 8
        parts["total"] = sum(v for k, v in parts.items() if k != "total")
    return parts
