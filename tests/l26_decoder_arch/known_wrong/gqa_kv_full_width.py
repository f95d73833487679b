"""Classic bug: Wk and Wv counted hidden × hidden, as in MHA (GQA's smaller KV projections ignored)."""

MODULE = "decoder"
REJECTED_BY = {"gqa_layer_params": ["correctness"]}

_correct_layer = gqa_layer_params


def gqa_layer_params(hidden, n_heads, n_kv_heads, ffn_hidden):
    _correct_layer(hidden, n_heads, n_kv_heads, ffn_hidden)  # same argument checks
    return _correct_layer(hidden, n_heads, n_heads, ffn_hidden)
