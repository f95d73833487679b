"""L31 · MoE: expert capacity."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l31_pipeline_moe", "moe", "expert_capacity")


def _cap(rng: random.Random) -> Params:
    return {
        "tokens": rng.choice([512, 1000, 2048, 4096, 8192]),
        "experts": rng.choice([8, 16, 64, 256]),
        "k": rng.choice([1, 2, 8]),
        "cf": rng.choice([1.0, 1.1, 1.25, 1.5, 2.0]),
    }


def _steps(p: Params) -> list[Step]:
    exact = Fraction(str(p["cf"])) * p["k"] * p["tokens"] / p["experts"]
    return [
        Step("=", N_("capacity factor"), p["cf"]),
        Step("×", N_("k assignments per token"), p["k"]),
        Step("×", N_("tokens"), p["tokens"]),
        Step("÷", N_("experts"), p["experts"]),
        Step("+", N_("round up to a whole slot"), float(math.ceil(exact) - exact)),
    ]


TEMPLATES = [
    T(
        "l31.expert_capacity",
        FN,
        "parallelism",
        2,
        31,
        N_(
            "A MoE layer with {experts} experts, top-{k} routing, {tokens} tokens in the batch, "
            "capacity factor {cf:g}. How many assignments may one expert take?"
        ),
        _cap,
        lambda p, fn: fn(p["tokens"], p["experts"], p["k"], p["cf"]),
        _steps,
        "1",
        rtol=1e-9,
        source=N_("Switch Transformer (Fedus et al. 2021): capacity = ceil(cf · k · T / E)"),
    ),
]


def _pp(rng: random.Random) -> Params:
    p = rng.choice([2, 4, 8])
    return {"p": p, "m": rng.choice([2, 4, 8, 16]), "s": rng.randrange(p)}


def _warm(orders: list) -> int:
    n = 0
    for op in orders:
        if str(op[0]).upper().startswith("B"):
            break
        n += 1
    return n


TEMPLATES += [
    T(
        "l31.warmup_forwards",
        ("l31_pipeline_moe", "pipeline", "pipeline_orders"),
        "parallelism",
        1,
        31,
        N_(
            "1F1B schedule, {p} stages, {m} micro-batches: how many forwards does stage {s} "
            "(0-based) run before its first backward?"
        ),
        _pp,
        lambda p, fn: _warm(fn(p["p"], p["m"], "1f1b")[p["s"]]),
        lambda p: [
            Step(
                "=",
                N_("warm-up min(p − s − 1, m) = {min_p_s_1_m}"),
                min(p["p"] - p["s"] - 1, p["m"]),
                args={"min_p_s_1_m": min(p["p"] - p["s"] - 1, p["m"])},
            ),
            Step(
                "+",
                N_("then the first steady-state forward, if a micro-batch is left"),
                int(p["p"] - p["s"] - 1 < p["m"]),
            ),
        ],
        "1",
        rtol=1e-9,
        source=N_("PipeDream-Flush / Megatron 1F1B"),
    ),
]
