"""Correct alternative: 8h/3 in integer arithmetic and a negative floor division as the ceiling."""

MODULE = "decoder"
ACCEPTED = ["swiglu_hidden"]


def swiglu_hidden(hidden, multiple_of=256, ffn_dim_multiplier=None):
    h, m = check_int("hidden", hidden, minimum=1), check_int("multiple_of", multiple_of, minimum=1)
    f = 8 * h // 3
    if ffn_dim_multiplier is not None:
        f = int(_check_real("ffn_dim_multiplier", ffn_dim_multiplier) * f)
    return -(-f // m) * m
