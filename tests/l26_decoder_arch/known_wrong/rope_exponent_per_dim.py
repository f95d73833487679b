"""Classic bug: θ_i = base^(-i/d) (the 2 of the pair index dropped): frequencies fall half as fast."""

MODULE = "decoder"
REJECTED_BY = {"rope_inv_freq": ["correctness"]}

_correct_rope = rope_inv_freq


def rope_inv_freq(head_dim, base=10_000.0):
    _correct_rope(head_dim, base)  # same argument checks
    return [base ** (-i / head_dim) for i in range(head_dim // 2)]
