"""Classic bug: the base multiplied by alpha (exponent 1, not d/(d-2)): the slowest pair is under-stretched."""

MODULE = "decoder"
REJECTED_BY = {"ntk_scaled_base": ["correctness"]}

_correct_ntk = ntk_scaled_base


def ntk_scaled_base(base, alpha, head_dim):
    _correct_ntk(base, alpha, head_dim)  # same argument checks
    return base * alpha
