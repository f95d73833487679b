"""Classic bug: acceptance p/q without the cap min(1, ·): Σ q · p/q = Σ p = 1 for every draft, so the
acceptance probability is always 1 and the output law loses the residual."""

MODULE = "spec_decode"
REJECTED_BY = {"accept_probability": ["correctness"], "output_distribution": ["correctness"]}


def accept_probability(p, q):
    pp, qq = _pair(p, q)
    return sum(b * (a / b) for a, b in zip(pp, qq, strict=True) if b)
