"""Course L06 §6.1 row 7: P'·V is said to keep only V's size; the dropped-out P' it also keeps is left out."""

MODULE = "autograd_memory"
REJECTED_BY = {"attention_saved_bytes": ["correctness"]}

_right_attention = attention_saved_bytes


def attention_saved_bytes(batch, n_heads, seq, head_dim, elem_bytes=2, dropout=True, mask_bytes=1):
    parts = _right_attention(batch, n_heads, seq, head_dim, elem_bytes, dropout, mask_bytes)
    parts["total"] -= parts["dropout_out"]
    parts["dropout_out"] = 0
    return parts
