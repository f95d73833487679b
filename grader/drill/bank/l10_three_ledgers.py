"""L10 · The three ledgers: training FLOPs, MFU, activation bytes per layer."""

from __future__ import annotations

import random

from grader.drill.bank._kit import BILLIONS, Params, Step, T, gpu, shape
from grader.i18n import N_, _

FN = ("l10_three_ledgers", "ledgers")


def _flops(rng: random.Random) -> Params:
    billions, trillions = rng.choice(BILLIONS), rng.choice([1, 2, 4, 10, 15])
    return {
        "billions": billions,
        "n": billions * 10**9,
        "trillions": trillions,
        "tokens": trillions * 10**12,
        "recompute": rng.choice([False, True]),
    }


def _flops_steps(p: Params) -> list[Step]:
    per = 8 if p["recompute"] else 6
    label = (
        N_("8 FLOPs per parameter per token (forward 2 + backward 4 + recomputed forward 2)")
        if p["recompute"]
        else N_("6 FLOPs per parameter per token (forward 2 + backward 4)")
    )
    return [
        Step("=", label, per, "FLOP"),
        Step("×", N_("parameters N"), p["n"]),
        Step("×", N_("tokens D"), p["tokens"]),
    ]


def _mfu(rng: random.Random) -> Params:
    p = gpu(rng)
    billions, n_gpus = rng.choice([7, 13, 34, 70]), rng.choice([8, 64, 256, 1024])
    mfu = rng.choice([0.25, 0.35, 0.45, 0.55])
    tps = round(mfu * n_gpus * p["peak"] / (6 * billions * 10**9), -1)
    return {**p, "billions": billions, "n": billions * 10**9, "gpus": n_gpus, "tps": tps}


def _mfu_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("model FLOP/s: 6 · N"), 6 * p["n"], "FLOP"),
        Step("×", N_("tokens per second"), p["tps"], "token/s"),
        Step("÷", N_("GPUs"), p["gpus"]),
        Step("÷", N_("{gpu} dense bf16 peak"), p["peak"], "FLOP/s", args={"gpu": p["gpu"]}),
    ]


def _act(rng: random.Random) -> Params:
    return shape(
        rng, {"s": rng.choice([2048, 4096, 8192]), "b": rng.choice([1, 2, 4]), "scores": rng.choice([True, False])}
    )


def _act_steps(p: Params) -> list[Step]:
    s, b, h, a = p["s"], p["b"], p["hidden"], p["heads"]
    steps = [Step("=", N_("34·s·b·h (norm, QKV, projection and MLP inputs, dropout masks)"), 34 * s * b * h, "B")]
    if p["scores"]:
        steps.append(Step("+", N_("5·a·s²·b (scores, softmax output, dropout mask)"), 5 * a * s * s * b, "B"))
    return steps


TEMPLATES = [
    T(
        "l10.training_flops",
        (*FN, "training_flops"),
        "flops",
        1,
        10,
        lambda p: _(
            "Training a dense {billions}B model on {trillions}T "
            "tokens{recompute_note}: how many FLOPs does "
            "the hardware execute?"
        ).format(
            billions=p["billions"],
            trillions=p["trillions"],
            recompute_note=_(" with full activation recomputation") if p["recompute"] else "",
        ),
        _flops,
        lambda p, fn: fn(p["n"], p["tokens"], p["recompute"]),
        _flops_steps,
        "FLOP",
        ("FLOP", "EFLOP", "ZFLOP"),
        source=N_("6ND (Kaplan et al. 2020); full recompute adds a forward: 8ND (that is HFU's count, not MFU's)"),
    ),
    T(
        "l10.mfu",
        (*FN, "mfu"),
        "flops",
        2,
        10,
        N_(
            "{gpus} {gpu} GPUs ({peak_t:g} TFLOP/s dense bf16 each) train a {billions}B model at "
            "{tps:g} tokens/s. What is the MFU?"
        ),
        _mfu,
        lambda p, fn: fn(p["tps"], p["n"], p["gpus"], p["peak"]),
        _mfu_steps,
        "ratio",
        ("%",),
        rtol=0.01,
        source=N_("MFU as in PaLM (Chowdhery et al. 2022): model FLOPs 6N per token over the cluster's peak"),
    ),
    T(
        "l10.activation_bytes_per_layer",
        (*FN, "activation_bytes_per_layer"),
        "memory",
        2,
        10,
        lambda p: _(
            "{model} shapes (hidden {hidden}, {heads} heads), sequence {s}, micro-batch {b}, "
            "16-bit activations, "
            "{scores_kept}: "
            "how many activation bytes does one layer keep for backward?"
        ).format(
            model=p["model"],
            hidden=p["hidden"],
            heads=p["heads"],
            s=p["s"],
            b=p["b"],
            scores_kept=_("attention scores stored")
            if p["scores"]
            else _("scores recomputed (selective recomputation)"),
        ),
        _act,
        lambda p, fn: fn(p["s"], p["b"], p["hidden"], p["heads"], p["scores"])["total"],
        _act_steps,
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("Korthikanti et al. 2022, eq. 1: sbh(34 + 5as/h)"),
    ),
]

TEMPLATES += [
    T(
        "l10.attention_score_bytes",
        (*FN, "activation_bytes_per_layer"),
        "memory",
        2,
        10,
        N_(
            "{model} shapes ({heads} heads), sequence {s}, micro-batch {b}: how many bytes do the "
            "attention scores, softmax output and dropout mask of one layer take (the 5·a·s²·b "
            "term)?"
        ),
        lambda rng: {**_act(rng), "scores": True},
        lambda p, fn: fn(p["s"], p["b"], p["hidden"], p["heads"], True)["attention_scores"],
        lambda p: [
            Step("=", N_("5 bytes per score (2 scores + 2 softmax + 1 mask)"), 5, "B"),
            Step("×", N_("heads a"), p["heads"]),
            Step("×", N_("s²"), p["s"] ** 2),
            Step("×", N_("b"), p["b"]),
        ],
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("Korthikanti et al. 2022: the term selective recomputation removes"),
    ),
]
