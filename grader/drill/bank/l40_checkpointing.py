"""L40 · Checkpointing: efficiency, the async staging stall, Young's and Daly's interval."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import GB, Params, Step, T
from grader.i18n import N_

FN = ("l40_checkpointing", "checkpoint")


def _eff(rng: random.Random) -> Params:
    return {
        "n": rng.choice([100, 200, 500, 1000]),
        "step": rng.choice([0.8, 1.5, 3.0, 10.0]),
        "save": rng.choice([2.5, 30, 120, 600, 900]),
    }


def _stage(rng: random.Random) -> Params:
    billions = rng.choice([7, 13, 70, 175, 405])
    return {
        "billions": billions,
        "state": billions * 16 * 10**9,
        "ranks": rng.choice([8, 64, 256, 1024]),
        "pcie": rng.choice([25, 50]),
    }


def _young(rng: random.Random) -> Params:
    return {"c": rng.choice([60, 180, 300, 600, 1200]), "mtbf_h": rng.choice([2, 6, 12, 24, 72])}


def _daly(p: Params) -> float:
    c, m = p["c"], p["mtbf_h"] * 3600
    r = math.sqrt(c / (2 * m))
    return math.sqrt(2 * c * m) * (1 + r / 3 + r * r / 9) - c


TEMPLATES = [
    T(
        "l40.checkpoint_efficiency",
        (*FN, "checkpoint_efficiency"),
        "operations",
        1,
        40,
        N_(
            "Training runs {n} steps of {step:g} s between checkpoints, and each save blocks "
            "training for {save:g} s. What fraction of wall time is training?"
        ),
        _eff,
        lambda p, fn: fn(p["n"], p["step"], p["save"]),
        lambda p: [
            Step("=", N_("compute between saves N·T_step"), p["n"] * p["step"], "s"),
            Step("÷", N_("plus the save"), p["n"] * p["step"] + p["save"], "s"),
        ],
        "ratio",
        ("%",),
        rtol=0.002,
    ),
    T(
        "l40.async_stage",
        (*FN, "async_stage_seconds"),
        "operations",
        2,
        40,
        N_(
            "A {billions}B model's full training state (16 B/param) is sharded over {ranks} GPUs; "
            "each stages its shard to pinned host memory over PCIe at {pcie} GB/s, all in "
            "parallel. How long does training stall?"
        ),
        _stage,
        lambda p, fn: fn(p["state"], p["ranks"], p["pcie"] * GB),
        lambda p: [
            Step("=", N_("training state 16 B × Ψ"), p["state"], "B"),
            Step("÷", N_("ranks"), p["ranks"]),
            Step("÷", N_("PCIe device-to-host"), p["pcie"] * GB, "B/s"),
        ],
        "s",
        ("s", "ms"),
        source=N_("the write to storage continues in the background and is not counted"),
    ),
    T(
        "l40.young_interval",
        (*FN, "optimal_interval"),
        "operations",
        2,
        40,
        N_(
            "A checkpoint costs {c} s; the job's MTBF is {mtbf_h} h. What checkpoint interval "
            "does Young's formula give?"
        ),
        _young,
        lambda p, fn: fn(p["c"], p["mtbf_h"] * 3600),
        lambda p: [
            Step(
                "=",
                N_("√(2·C·M) = √(2 × {c} × {mtbf_h_3600})"),
                math.sqrt(2 * p["c"] * p["mtbf_h"] * 3600),
                "s",
                args={"c": p["c"], "mtbf_h_3600": p["mtbf_h"] * 3600},
            )
        ],
        "s",
        ("min", "h", "s"),
        rtol=0.005,
        source=N_("Young 1974: τ = √(2CM)"),
    ),
    T(
        "l40.daly_interval",
        (*FN, "optimal_interval"),
        "operations",
        3,
        40,
        N_("A checkpoint costs {c} s; MTBF {mtbf_h} h. What interval does Daly's higher-order formula give?"),
        _young,
        lambda p, fn: fn(p["c"], p["mtbf_h"] * 3600, "daly"),
        lambda p: [
            Step("=", N_("√(2CM)·[1 + ⅓√(C/2M) + ⅑(C/2M)]"), _daly(p) + p["c"], "s"),
            Step("-", N_("C"), p["c"], "s"),
        ],
        "s",
        ("min", "h", "s"),
        rtol=0.005,
        source=N_("Daly 2006"),
    ),
]

TEMPLATES += [
    T(
        "l40.async_efficiency",
        (*FN, "checkpoint_efficiency"),
        "operations",
        2,
        40,
        N_(
            "Training runs {n} steps of {step:g} s between checkpoints. A synchronous save stalls "
            "{save:g} s; an asynchronous one stalls only 2.5 s for staging. What fraction of wall "
            "time is training with the async save?"
        ),
        _eff,
        lambda p, fn: fn(p["n"], p["step"], 2.5),
        lambda p: [
            Step("=", N_("compute between saves"), p["n"] * p["step"], "s"),
            Step("÷", N_("plus the 2.5 s staging stall"), p["n"] * p["step"] + 2.5, "s"),
        ],
        "ratio",
        ("%",),
        rtol=0.0005,
    ),
]
