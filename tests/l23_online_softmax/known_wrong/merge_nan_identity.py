"""Classic bug: no guard for two -inf maxima; e^(-inf - -inf) = nan poisons the identity."""

MODULE = "softmax"
REJECTED_BY = {"merge_online_states": ["correctness"]}


def merge_online_states(a, b):
    (m_a, d_a), (m_b, d_b) = a, b
    m = max(m_a, m_b)
    nan_safe_exp = lambda v: math.exp(v) if v == v else math.nan  # exp(nan) stays nan
    return m, d_a * nan_safe_exp(m_a - m) + d_b * nan_safe_exp(m_b - m)
