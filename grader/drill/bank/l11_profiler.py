"""L11 · Profiling: Amdahl's law on a training step."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l11_profiler", "profiler", "amdahl")
PARTS = [
    N_("the optimizer step"),
    N_("the data loader wait"),
    N_("the gradient all-reduce"),
    N_("LayerNorm kernels"),
    N_("the attention kernel"),
]


def _amdahl(rng: random.Random) -> Params:
    total = rng.choice([400, 850, 1200, 2000])
    part = rng.choice([40, 80, 150, 300])
    return {
        "total_ms": total,
        "part_ms": part,
        "new_ms": rng.choice([part // 2, part // 4, part // 8]),
        "what": rng.choice(PARTS),
        "total": total / 1000,
        "part": part / 1000,
    }


TEMPLATES = [
    T(
        "l11.amdahl_speedup",
        FN,
        "operations",
        2,
        11,
        N_(
            "A {total_ms} ms training step spends {part_ms} ms in {what}; you make that part take "
            "{new_ms} ms. What is the speed-up of the whole step?"
        ),
        _amdahl,
        lambda p, fn: fn(p["total"], p["part"], p["new_ms"] / 1000)["speedup"],
        lambda p: [
            Step("=", N_("old step"), p["total"], "s"),
            Step("÷", N_("new step: total − part + new part"), p["total"] - p["part"] + p["new_ms"] / 1000, "s"),
        ],
        "1",
        rtol=0.002,
        source=N_("Amdahl's law"),
    ),
    T(
        "l11.amdahl_max",
        FN,
        "operations",
        1,
        11,
        N_(
            "A {total_ms} ms training step spends {part_ms} ms in {what}. Even if that part took "
            "no time at all, what is the largest possible speed-up of the step?"
        ),
        _amdahl,
        lambda p, fn: fn(p["total"], p["part"], p["new_ms"] / 1000)["max_speedup"],
        lambda p: [
            Step("=", N_("step"), p["total"], "s"),
            Step("÷", N_("step without the part"), p["total"] - p["part"], "s"),
        ],
        "1",
        rtol=0.002,
        source=N_("Amdahl's law: the bound 1 / (1 − f)"),
    ),
]

TEMPLATES += [
    T(
        "l11.amdahl_saved",
        FN,
        "operations",
        1,
        11,
        N_(
            "A {total_ms} ms step spends {part_ms} ms in {what}, which you bring down to {new_ms} "
            "ms. What fraction of the step's time is saved?"
        ),
        _amdahl,
        lambda p, fn: fn(p["total"], p["part"], p["new_ms"] / 1000)["time_saved_fraction"],
        lambda p: [
            Step("=", N_("time saved: part − new part"), p["part"] - p["new_ms"] / 1000, "s"),
            Step("÷", N_("old step"), p["total"], "s"),
        ],
        "ratio",
        ("%",),
        rtol=0.005,
    ),
]
