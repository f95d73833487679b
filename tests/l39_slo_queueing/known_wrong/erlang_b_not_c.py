"""Classic mistake: returns Erlang B (the loss probability of a system without a queue) as P(wait).

B_c is the first half of the recipe; C(2, 1) comes out 1/5 instead of 1/3, so every figure built on it
(mean wait, tail, slots for the SLO) is too optimistic.
"""

MODULE = "slo"
REJECTED_BY = {"erlang_c": ["correctness"], "mmc_wait": ["correctness"], "servers_for_wait_slo": ["correctness"]}


def erlang_c(servers, offered_load):
    c, a = check_int("servers", servers, 1), _check_real("offered_load", offered_load)
    if a >= c:
        raise ValueError(f"offered_load = {a} must be below servers = {c}")
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b
