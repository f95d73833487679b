"""Breaks equal remainders toward the higher index: 10 over three equal ranks gives [3, 3, 4]."""

MODULE = "landscape"
REJECTED_BY = {"balance_batch": ["correctness"]}


def balance_batch(global_batch, throughputs):
    b = check_int("global_batch", global_batch)
    exact = [Fraction(str(th)) for th in _check_reals("throughputs", throughputs)]
    quotas = [b * th / sum(exact) for th in exact]
    parts = [math.floor(q) for q in quotas]
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - parts[i]), -i))
    for i in order[: b - sum(parts)]:
        parts[i] += 1
    return parts
