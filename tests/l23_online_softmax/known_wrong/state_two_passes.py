"""Classic bug: max first, then the sum: two passes over xs (a one-shot iterator is empty the second time)."""

MODULE = "softmax"
REJECTED_BY = {"online_softmax_state": ["correctness"]}


def online_softmax_state(xs):
    m = max(xs)
    return m, sum(math.exp(x - m) for x in xs)
