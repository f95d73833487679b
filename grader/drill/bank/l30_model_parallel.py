"""L30 · Model parallelism: the pipeline bubble (two definitions) and tensor parallelism's traffic."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_, _

FN = ("l30_model_parallel", "parallel")


def _pp(rng: random.Random) -> Params:
    return {"p": rng.choice([2, 4, 8, 16]), "m": rng.choice([4, 8, 16, 32, 64]), "v": rng.choice([1, 1, 2, 4])}


def _inter(p: Params) -> str:
    return _(", interleaved with {v} virtual stages per GPU").format(v=p["v"]) if p["v"] > 1 else ""


def _tp(rng: random.Random) -> Params:
    return {
        "b": rng.choice([1, 2, 4]),
        "s": rng.choice([2048, 4096, 8192]),
        "h": rng.choice([4096, 8192, 16384]),
        "tp": rng.choice([2, 4, 8]),
    }


def _tp_steps(p: Params) -> list[Step]:
    m = p["b"] * p["s"] * p["h"] * 2
    return [
        Step("=", N_("message: b·s·h × 2 B"), m, "B"),
        Step(
            "×",
            N_("ring: 2(tp−1)/tp = {v2_tp_1}/{tp}"),
            2 * (p["tp"] - 1) / p["tp"],
            args={"v2_tp_1": 2 * (p["tp"] - 1), "tp": p["tp"]},
        ),
        Step("×", N_("all-reduces per layer: attention and MLP, forward and backward"), 4),
    ]


TEMPLATES = [
    T(
        "l30.bubble_time_fraction",
        (*FN, "pipeline_bubble_time_fraction"),
        "parallelism",
        2,
        30,
        lambda p: _(
            "A {p}-stage pipeline, {m} micro-batches per step{inter_p} (1F1B). What fraction of "
            "the step's wall time does each stage idle?"
        ).format(p=p["p"], m=p["m"], inter_p=_inter(p)),
        _pp,
        lambda p, fn: fn(p["p"], p["m"], p["v"]),
        lambda p: [
            Step("=", N_("bubble: p − 1 chunk-times"), p["p"] - 1),
            Step("÷", N_("wall time: v·m + p − 1"), p["v"] * p["m"] + p["p"] - 1),
        ],
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_("the course's definition: idle share of wall time (p−1)/(v·m + p−1)"),
    ),
    T(
        "l30.bubble_ratio",
        (*FN, "pipeline_bubble_ratio"),
        "parallelism",
        2,
        30,
        lambda p: _(
            "A {p}-stage pipeline, {m} micro-batches{inter_p}. What is Megatron's bubble ratio "
            "(bubble time over ideal compute time)?"
        ).format(p=p["p"], m=p["m"], inter_p=_inter(p)),
        _pp,
        lambda p, fn: fn(p["p"], p["m"], p["v"]),
        lambda p: [Step("=", N_("bubble: p − 1"), p["p"] - 1), Step("÷", N_("ideal: v·m"), p["v"] * p["m"])],
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_("Narayanan et al. 2021 (Megatron-LM), (p−1)/(v·m)"),
    ),
    T(
        "l30.tp_allreduce_bytes",
        (*FN, "tp_allreduce_bytes_per_layer"),
        "communication",
        3,
        30,
        N_(
            "Megatron tensor parallelism TP = {tp}, micro-batch {b}, sequence {s}, hidden {h}, "
            "bf16 activations. How many bytes does each GPU send per transformer layer and "
            "training step?"
        ),
        _tp,
        lambda p, fn: fn(p["b"], p["s"], p["h"], p["tp"]),
        _tp_steps,
        "B",
        ("GB", "MB", "GiB", "B"),
        source=N_("Shoeybi et al. 2019: two all-reduces forward, two backward per layer"),
    ),
]


def _configs(rng: random.Random) -> Params:
    cfgs = set()
    while len(cfgs) < 4:
        cfgs.add((rng.choice([2, 4, 8, 16]), rng.choice([8, 16, 32, 64])))
    shown = [f"p={p}, m={m}" for p, m in sorted(cfgs)]
    return {"cfgs": shown}


def _pm(c: str) -> tuple[int, int]:
    p, m = (int(x.split("=")[1]) for x in c.split(", "))
    return p, m


TEMPLATES += [
    T(
        "l30.bubble_order",
        (*FN, "pipeline_bubble_time_fraction"),
        "parallelism",
        1,
        30,
        N_("Order these pipelines (p stages, m micro-batches, 1F1B) by bubble fraction of wall time, smallest first."),
        _configs,
        lambda p, fn: sorted(p["cfgs"], key=lambda c: (fn(*_pm(c)), c)),
        lambda p: [
            Step("=", N_("{c}: (p−1)/(m+p−1)"), (_pm(c)[0] - 1) / (_pm(c)[1] + _pm(c)[0] - 1), args={"c": c})
            for c in p["cfgs"]
        ],
        kind="order",
        options=lambda p: list(p["cfgs"]),
    ),
]
