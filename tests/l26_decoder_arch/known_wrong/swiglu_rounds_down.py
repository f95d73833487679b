"""Classic bug: 8h/3 rounded DOWN to the multiple (4096 → 10 752, not 11 008)."""

MODULE = "decoder"
REJECTED_BY = {"swiglu_hidden": ["correctness"]}


def swiglu_hidden(hidden, multiple_of=256, ffn_dim_multiplier=None):
    h, m = _check_int("hidden", hidden), _check_int("multiple_of", multiple_of)
    f = int(2 * (4 * h) / 3)
    if ffn_dim_multiplier is not None:
        f = int(_check_real("ffn_dim_multiplier", ffn_dim_multiplier) * f)
    return m * (f // m)
