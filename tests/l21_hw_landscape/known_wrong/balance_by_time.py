"""Splits in proportion to the values as if they were step times: the slow rank gets the bigger share."""

MODULE = "landscape"
REJECTED_BY = {"balance_batch": ["correctness"]}
_right = balance_batch


def balance_batch(global_batch, throughputs):
    rates = _check_reals("throughputs", throughputs)
    return _right(global_batch, [1 / Fraction(str(r)) for r in rates])
