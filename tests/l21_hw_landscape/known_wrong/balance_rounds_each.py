"""Rounds each quota on its own: 10 over three equal ranks gives [3, 3, 3], one sample lost."""

MODULE = "landscape"
REJECTED_BY = {"balance_batch": ["correctness"]}


def balance_batch(global_batch, throughputs):
    b = check_int("global_batch", global_batch)
    rates = _check_reals("throughputs", throughputs)
    return [round(b * r / sum(rates)) for r in rates]
