"""Hands the samples left after the floors to the first ranks, not to the largest remainders: [644, 380]."""

MODULE = "landscape"
REJECTED_BY = {"balance_batch": ["correctness"]}


def balance_batch(global_batch, throughputs):
    b = check_int("global_batch", global_batch)
    exact = [Fraction(str(th)) for th in _check_reals("throughputs", throughputs)]
    parts = [math.floor(b * th / sum(exact)) for th in exact]
    for i in range(b - sum(parts)):
        parts[i] += 1
    return parts
