"""Classic bug: merging through e^m (d_a e^m_a + d_b e^m_b) overflows as soon as m passes ~709."""

MODULE = "softmax"
REJECTED_BY = {"merge_online_states": ["correctness"]}


def merge_online_states(a, b):
    (m_a, d_a), (m_b, d_b) = a, b
    m = max(m_a, m_b)
    total = d_a * math.exp(m_a) + d_b * math.exp(m_b)
    return m, total / math.exp(m) if m != -math.inf else 0.0
