"""Classic bug: the score matrix given n_kv_heads heads (GQA shares K and V, not the scores)."""

MODULE = "transformer_ops"
REJECTED_BY = {"block_shapes": ["correctness"]}

_correct_shapes = block_shapes


def block_shapes(batch, seq_len, hidden, n_heads, n_kv_heads, ffn_hidden):
    got = _correct_shapes(batch, seq_len, hidden, n_heads, n_kv_heads, ffn_hidden)
    got["scores"] = (batch, n_kv_heads, seq_len, seq_len)
    return got
