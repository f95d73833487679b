"""Classic bug: 8h/3 rounded DOWN to the multiple (4096 → 10 752, not 11 008)."""

MODULE = "decoder"
REJECTED_BY = {"swiglu_hidden": ["correctness"]}


def swiglu_hidden(hidden, multiple_of=256, ffn_dim_multiplier=None):
    h, m = check_int("hidden", hidden, minimum=1), check_int("multiple_of", multiple_of, minimum=1)
    f = int(2 * (4 * h) / 3)
    if ffn_dim_multiplier is not None:
        f = int(_check_real("ffn_dim_multiplier", ffn_dim_multiplier) * f)
    return m * (f // m)
