"""Classic bug: the residual (p − q)₊ returned without dividing by its sum: it sums to 1 − β, not 1."""

MODULE = "spec_decode"
REJECTED_BY = {"residual_distribution": ["correctness"], "output_distribution": ["correctness"]}


def residual_distribution(p, q):
    pp, qq = _pair(p, q)
    over = [max(a - b, 0) for a, b in zip(pp, qq, strict=True)]
    if sum(over) == 0:
        raise ValueError("q equals p: no residual")
    return over
