"""L20 · Fault diagnosis: robust z of a slow GPU, the straggler inversion."""

from __future__ import annotations

import random
import statistics

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l20_fault_diagnosis", "diagnosis")


def _z(rng: random.Random) -> Params:
    base = rng.choice([40, 80, 120])
    xs = [base + d for d in rng.sample([-4, -3, -2, -1, 0, 1, 2, 3, 4], 8)]
    slow = rng.randrange(8)
    xs[slow] = base + rng.choice([10, 25, 50, 90])
    return {"xs": xs, "shown": ", ".join(map(str, xs)), "slow": slow}


def _z_steps(p: Params) -> list[Step]:
    xs = p["xs"]
    med = statistics.median(xs)
    mad = statistics.median(abs(x - med) for x in xs)
    return [
        Step("=", N_("0.6745"), 0.6745),
        Step(
            "×",
            N_("x − median = {xs_slow} − {med:g}"),
            xs[p["slow"]] - med,
            args={"xs_slow": xs[p["slow"]], "med": med},
        ),
        Step("÷", N_("MAD: median of |x − median|"), mad),
    ]


def _strag(rng: random.Random) -> Params:
    p = _z(rng)
    step = max(p["xs"]) + 5
    p["wait"] = [step - x for x in p["xs"]]
    p["wait_shown"] = ", ".join(map(str, p["wait"]))
    return p


TEMPLATES = [
    T(
        "l20.robust_z",
        (*FN, "robust_z"),
        "operations",
        2,
        20,
        N_("Per-GPU step compute times (ms) of one node: {shown}. What is the modified z-score of GPU {slow}?"),
        _z,
        lambda p, fn: fn(p["xs"])[p["slow"]],
        _z_steps,
        "1",
        rtol=0.005,
        source=N_("Iglewicz & Hoaglin: 0.6745·(x − median)/MAD, flag above 3.5"),
    ),
    T(
        "l20.straggler_culprit",
        (*FN, "find_straggler"),
        "operations",
        1,
        20,
        N_(
            "A synchronous step: compute (ms) per rank {shown}; time waiting in the all-reduce "
            "{wait_shown}. Which rank (0-based) is the culprit?"
        ),
        _strag,
        lambda p, fn: fn(p["xs"], p["wait"])["culprit"],
        lambda p: [Step("=", N_("the longest compute, which also waits the least"), p["slow"])],
        "1",
        rtol=1e-9,
        source=N_("the straggler inversion: the victim waits longest, the culprit computes longest"),
    ),
]
