"""C1 · The scaling study: a DDP step's α-β model and weak-scaling efficiency."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("c1_scaling_study", "scaling")


def _step(rng: random.Random) -> Params:
    return {
        "p": rng.choice([2, 4, 8, 16, 64]),
        "tc_ms": rng.choice([40, 100, 250]),
        "mb": rng.choice([6, 25, 100, 500]),
        "alpha_us": rng.choice([20, 200]),
        "beta_gb": rng.choice([1, 10, 45]),
    }


def _step_steps(p: Params) -> list[Step]:
    n = p["p"]
    return [
        Step("=", N_("compute"), p["tc_ms"] / 1000, "s"),
        Step("+", N_("latency 2(P−1)·α"), 2 * (n - 1) * p["alpha_us"] * 1e-6, "s"),
        Step("+", N_("bandwidth 2(P−1)/P · bytes / β"), 2 * (n - 1) / n * p["mb"] * 1e6 / (p["beta_gb"] * 1e9), "s"),
    ]


def _eff(rng: random.Random) -> Params:
    t1 = rng.choice([0.04, 0.1, 0.25])
    slow = rng.choice([1.05, 1.17, 1.3, 1.6])
    return {"t1": t1, "tp": round(t1 * slow, 4), "p": rng.choice([4, 8, 16, 64])}


TEMPLATES = [
    T(
        "c1.ddp_step_seconds",
        (*FN, "ddp_step_seconds"),
        "parallelism",
        2,
        101,
        N_(
            "Weak-scaling DDP on {p} ranks: {tc_ms} ms of compute per step, then a ring "
            "all-reduce of {mb} MB of gradients, α = {alpha_us} µs, β = {beta_gb} GB/s, no "
            "overlap. How long is a step?"
        ),
        _step,
        lambda p, fn: fn(p["p"], p["tc_ms"] / 1000, p["mb"] * 10**6, p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9),
        _step_steps,
        "s",
        ("ms", "s"),
        source=N_("the α-β model of the course's scaling study"),
    ),
    T(
        "c1.weak_scaling_efficiency",
        (*FN, "scaling_efficiency"),
        "parallelism",
        1,
        101,
        N_(
            "Weak scaling (fixed per-rank batch): a step takes {t1:g} s on 1 GPU and {tp:g} s on "
            "{p}. What is the scaling efficiency at {p}?"
        ),
        _eff,
        lambda p, fn: fn([1, p["p"]], [p["t1"], p["tp"]])[p["p"]],
        lambda p: [Step("=", N_("T(1)"), p["t1"], "s"), Step("÷", N_("T(P)"), p["tp"], "s")],
        "ratio",
        ("%",),
        rtol=0.002,
    ),
]
