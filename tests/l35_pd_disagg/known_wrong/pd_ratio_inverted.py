"""The ratio upside down, (L_in / L_out) · (Θ_P / Θ_D): 128 decode per prefill instance for summaries."""

MODULE = "disagg"
REJECTED_BY = {"pd_ratio": ["correctness"]}


def pd_ratio(l_in, l_out, prefill_tok_per_s, decode_tok_per_s):
    return (l_in / l_out) * (prefill_tok_per_s / decode_tok_per_s)
