"""Classic bug: ffn_dim_multiplier validated but never applied (LLaMA-3-8B gets 11 264, not 14 336)."""

MODULE = "decoder"
REJECTED_BY = {"swiglu_hidden": ["correctness"]}

_correct_swiglu = swiglu_hidden


def swiglu_hidden(hidden, multiple_of=256, ffn_dim_multiplier=None):
    if ffn_dim_multiplier is not None:
        _check_real("ffn_dim_multiplier", ffn_dim_multiplier)
    return _correct_swiglu(hidden, multiple_of, None)
