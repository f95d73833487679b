"""Classic bug: m and p swapped in the bubble formulas ((m−1)/(v·p + m−1), (m−1)/(v·p))."""

MODULE = "parallel"
REJECTED_BY = {"pipeline_bubble_time_fraction": ["correctness"], "pipeline_bubble_ratio": ["correctness"]}


def pipeline_bubble_time_fraction(p, m, v=1):
    p, m, v = _check_pipeline(p, m, v)
    return (m - 1) / (v * p + m - 1)


def pipeline_bubble_ratio(p, m, v=1):
    p, m, v = _check_pipeline(p, m, v)
    return (m - 1) / (v * p)
