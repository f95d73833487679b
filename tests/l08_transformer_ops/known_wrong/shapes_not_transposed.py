"""Classic bug: q, k, v left as (B, S, heads, d) after the view: the transpose(1, 2) is missing."""

MODULE = "transformer_ops"
REJECTED_BY = {"block_shapes": ["correctness"]}

_correct_shapes = block_shapes


def block_shapes(batch, seq_len, hidden, n_heads, n_kv_heads, ffn_hidden):
    got = _correct_shapes(batch, seq_len, hidden, n_heads, n_kv_heads, ffn_hidden)
    for name in ("q", "k", "v"):
        b, heads, s, d = got[name]
        got[name] = (b, s, heads, d)
    return got
