"""Classic bug: the streaming state adds e^(x - m) but never rescales d when the max rises."""

MODULE = "softmax"
REJECTED_BY = {"online_softmax_state": ["correctness"]}


def online_softmax_state(xs):
    m, d = -math.inf, 0.0
    for x in xs:
        m = max(m, float(x))
        if m != -math.inf:
            d += math.exp(x - m)
    return m, d
