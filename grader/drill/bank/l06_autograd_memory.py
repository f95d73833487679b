"""L06 · Autograd memory: what naive attention saves for backward, and checkpointing's best segment count."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_, _

FN = ("l06_autograd_memory", "autograd_memory")


def _attn(rng: random.Random) -> Params:
    return {
        "b": rng.choice([1, 2, 4, 8]),
        "h": rng.choice([16, 32, 40, 64]),
        "s": rng.choice([1024, 2048, 4096, 8192]),
        "d": rng.choice([64, 128]),
        "dropout": rng.choice([True, False]),
    }


def _attn_steps(p: Params) -> list[Step]:
    b, h, s, d = p["b"], p["h"], p["s"], p["d"]
    steps = [
        Step("=", N_("Q, K, V: 3 × B·n·S·d × 2 B"), 3 * b * h * s * d * 2, "B"),
        Step("+", N_("softmax output P: B·n·S² × 2 B"), b * h * s * s * 2, "B"),
    ]
    if p["dropout"]:
        steps += [
            Step("+", N_("dropout mask: B·n·S² × 1 B (bool on CUDA)"), b * h * s * s, "B"),
            Step("+", N_("dropout output P' kept by P'·V: B·n·S² × 2 B"), b * h * s * s * 2, "B"),
        ]
    return steps


def _ckpt(rng: random.Random) -> Params:
    return {
        "layers": rng.choice([12, 24, 32, 40, 48, 80]),
        "act": rng.choice([20, 34, 50, 100]),
        "inp": rng.choice([1, 2, 4]),
    }


def _ckpt_best(p: Params) -> tuple[int, int]:
    n, act, inp = p["layers"], p["act"], p["inp"]
    return min((k * inp + math.ceil(n / k) * act, k) for k in range(1, n + 1))


def _ckpt_steps(p: Params) -> list[Step]:
    peak, k = _ckpt_best(p)
    return [
        Step("=", N_("k = {k} checkpoints kept: k × input bytes"), k * p["inp"], "GB", args={"k": k}),
        Step(
            "+",
            N_("one segment recomputed: ceil({layers}/{k}) layers × activation bytes"),
            math.ceil(p["layers"] / k) * p["act"],
            "GB",
            args={"layers": p["layers"], "k": k},
        ),
    ]


TEMPLATES = [
    T(
        "l06.attention_saved_bytes",
        (*FN, "attention_saved_bytes"),
        "memory",
        2,
        6,
        lambda p: _(
            "Naive attention (no FlashAttention), bf16, B = {b}, {h} heads, S = {s}, head dim "
            "{d}, {with_without} attention dropout: how many bytes does autograd "
            "save for the backward pass of this one attention?"
        ).format(b=p["b"], h=p["h"], s=p["s"], d=p["d"], with_without=_("with") if p["dropout"] else _("without")),
        _attn,
        lambda p, fn: fn(p["b"], p["h"], p["s"], p["d"], 2, p["dropout"])["total"],
        _attn_steps,
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("saved tensors of softmax(QKᵀ)·V; a CUDA bool mask is 1 byte per score"),
    ),
    T(
        "l06.checkpoint_peak",
        (*FN, "checkpoint_plan"),
        "memory",
        3,
        6,
        N_(
            "A {layers}-layer model keeps {act} GB of activations per layer; a checkpoint of a "
            "layer's input costs {inp} GB. With the best number of checkpointed segments, what is "
            "the activation peak (in GB)?"
        ),
        _ckpt,
        lambda p, fn: fn(p["layers"], p["act"], p["inp"])["peak_bytes"] * 10**9,
        lambda p: [Step(s.op, s.label, s.value * 10**9, "B", s.args) for s in _ckpt_steps(p)],
        "B",
        ("GB", "B"),
        source=N_("Chen et al. 2016 (sublinear memory): peak(k) = k·input + ceil(L/k)·act, minimised over k"),
    ),
]

TEMPLATES += [
    T(
        "l06.checkpoint_segments",
        (*FN, "checkpoint_plan"),
        "memory",
        3,
        6,
        N_(
            "A {layers}-layer model keeps {act} units of activations per layer; a checkpoint of a "
            "layer's input costs {inp}. How many checkpointed segments minimise the activation "
            "peak (the smallest on ties)?"
        ),
        _ckpt,
        lambda p, fn: fn(p["layers"], p["act"], p["inp"])["segments"],
        lambda p: [
            Step(
                "=",
                N_("k minimising k·{inp} + ceil({layers}/k)·{act} (peak {ckpt_best_p_0})"),
                _ckpt_best(p)[1],
                args={"inp": p["inp"], "layers": p["layers"], "act": p["act"], "ckpt_best_p_0": _ckpt_best(p)[0]},
            )
        ],
        "1",
        rtol=1e-9,
        source=N_("Chen et al. 2016: about √L segments"),
    ),
    T(
        "l06.dropout_mask_bytes",
        (*FN, "attention_saved_bytes"),
        "memory",
        1,
        6,
        N_(
            "Naive attention with dropout on CUDA, B = {b}, {h} heads, S = {s}: how many bytes "
            "does the saved dropout mask take (bool, 1 byte per score)?"
        ),
        lambda rng: {**_attn(rng), "dropout": True},
        lambda p, fn: fn(p["b"], p["h"], p["s"], p["d"], 2, True)["dropout_mask"],
        lambda p: [Step("=", N_("B·n·S² scores"), p["b"] * p["h"] * p["s"] ** 2), Step("×", N_("1 byte each"), 1, "B")],
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("torch's fused dropout saves a bool mask"),
    ),
]
