"""Without dropout, P·V's saved P is counted again although it is the tensor softmax already saved."""

MODULE = "autograd_memory"
REJECTED_BY = {"attention_saved_bytes": ["correctness"]}

_right_attention = attention_saved_bytes


def attention_saved_bytes(batch, n_heads, seq, head_dim, elem_bytes=2, dropout=True, mask_bytes=1):
    parts = _right_attention(batch, n_heads, seq, head_dim, elem_bytes, dropout, mask_bytes)
    if not dropout:
        parts["dropout_out"] = parts["softmax_out"]
        parts["total"] += parts["softmax_out"]
    return parts
