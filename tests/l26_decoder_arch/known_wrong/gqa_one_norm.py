"""Classic bug: one RMSNorm weight per block instead of two (the pre-FFN norm forgotten)."""

MODULE = "decoder"
REJECTED_BY = {"gqa_layer_params": ["correctness"]}

_correct_layer = gqa_layer_params


def gqa_layer_params(hidden, n_heads, n_kv_heads, ffn_hidden):
    got = _correct_layer(hidden, n_heads, n_kv_heads, ffn_hidden)
    got["norms"] = hidden
    got["total"] = sum(v for k, v in got.items() if k != "total")
    return got
