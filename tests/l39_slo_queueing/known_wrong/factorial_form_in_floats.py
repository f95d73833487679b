"""Classic mistake: the textbook factorial form A^c/c! in floats: fine for c = 24, OverflowError at C(400, 390)."""

MODULE = "slo"
REJECTED_BY = {"erlang_c": ["correctness"]}


def erlang_c(servers, offered_load):
    c, a = check_int("servers", servers, 1), _check_real("offered_load", offered_load)
    if a >= c:
        raise ValueError(f"offered_load = {a} must be below servers = {c}")
    head = sum(a**k / math.factorial(k) for k in range(c))
    tail = a**c / math.factorial(c) * c / (c - a)
    return tail / (head + tail)
