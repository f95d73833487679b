"""Classic bug: interleaving divides the whole time fraction by v ((p−1)/(v·(m+p−1))) instead of the bubble only."""

MODULE = "parallel"
REJECTED_BY = {"pipeline_bubble_time_fraction": ["correctness"]}


def pipeline_bubble_time_fraction(p, m, v=1):
    p, m, v = _check_pipeline(p, m, v)
    return (p - 1) / (v * (m + p - 1))
