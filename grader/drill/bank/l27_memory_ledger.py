"""L27 · The memory ledger: activations per layer by recompute level, KV cache, attention's share of FLOPs."""

from __future__ import annotations

import random

from grader.drill.bank._kit import BILLIONS, Params, Step, T, shape
from grader.i18n import N_, _

FN = ("l27_memory_ledger", "ledger")


def _act(rng: random.Random) -> Params:
    return shape(
        rng,
        {
            "b": rng.choice([1, 2, 4, 8]),
            "s": rng.choice([2048, 4096, 8192]),
            "rc": rng.choice(["none", "selective", "full"]),
        },
    )


def _act_steps(p: Params) -> list[Step]:
    b, s, d, h = p["b"], p["s"], p["hidden"], p["heads"]
    if p["rc"] == "full":
        return [Step("=", N_("full recompute keeps the layer input only: 2·B·S·d"), 2 * b * s * d, "B")]
    steps = [Step("=", N_("34·B·S·d (inputs of the matmuls, norms, dropout masks)"), 34 * b * s * d, "B")]
    if p["rc"] == "none":
        steps.append(Step("+", N_("5·B·H·S² (scores, softmax output, dropout mask)"), 5 * b * h * s * s, "B"))
    return steps


def _kv(rng: random.Random) -> Params:
    return shape(
        rng,
        {
            "s": rng.choice([2048, 4096, 8192, 32768, 131072]),
            "b": rng.choice([1, 8, 32, 64]),
            "dtype": rng.choice(["bf16", "fp8"]),
        },
    )


def _kv_steps(p: Params) -> list[Step]:
    e = 2 if p["dtype"] == "bf16" else 1
    return [
        Step("=", N_("per token: 2 · L · H_kv · d · bytes"), 2 * p["layers"] * p["kv"] * p["head_dim"] * e, "B"),
        Step("×", N_("tokens per sequence"), p["s"]),
        Step("×", N_("sequences"), p["b"]),
    ]


def _share(rng: random.Random) -> Params:
    return shape(rng, {"s": rng.choice([2048, 8192, 32768, 131072])})


def _params_of(p: Params) -> int:
    return {
        "LLaMA-2-7B": 6_738_415_616,
        "LLaMA-3-8B": 8_030_261_248,
        "LLaMA-3-70B": 70_553_706_496,
        "LLaMA-2-13B": 13_015_864_320,
        "Mistral-7B": 7_241_732_096,
        "Qwen2.5-72B": 72_706_203_648,
        "LLaMA-3.1-405B": 405_853_388_800,
    }[p["model"]]


def _mem(rng: random.Random) -> Params:
    billions = rng.choice(BILLIONS)
    return {
        "billions": billions,
        "n": billions * 10**9,
        "opt": rng.choice([("Adam", 12), (N_("SGD with momentum"), 4), ("8-bit Adam", 6)]),
    }


TEMPLATES = [
    T(
        "l27.activation_bytes",
        (*FN, "activation_bytes_per_layer"),
        "memory",
        2,
        27,
        N_(
            "{model} shapes (hidden {hidden}, {heads} heads), micro-batch {b}, sequence {s}, "
            "16-bit activations, recomputation '{rc}': how many activation bytes does one layer "
            "keep for backward?"
        ),
        _act,
        lambda p, fn: fn(p["b"], p["s"], p["hidden"], p["heads"], p["rc"]),
        _act_steps,
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("Korthikanti et al. 2022 (selective activation recomputation)"),
    ),
    T(
        "l27.kv_cache_bytes",
        (*FN, "kv_cache_bytes"),
        "serving",
        2,
        27,
        N_(
            "{model} ({layers} layers, {kv} KV heads of {head_dim}), KV cache in {dtype}: how "
            "much memory do {b} sequences of {s} tokens need?"
        ),
        _kv,
        lambda p, fn: fn(p["layers"], p["kv"], p["head_dim"], p["s"], p["b"], 2 if p["dtype"] == "bf16" else 1),
        _kv_steps,
        "B",
        ("GiB", "GB", "TB", "B"),
        source=N_("one factor of 2 for K and V (CONVENTIONS.md)"),
    ),
    T(
        "l27.attention_flops_share",
        (*FN, "attention_flops_share"),
        "flops",
        3,
        27,
        N_(
            "Training {model} ({layers} layers, hidden {hidden}) on sequences of {s} tokens: the "
            "attention-score FLOPs (QKᵀ and A·V, forward and backward) as a fraction of the "
            "weight FLOPs 6·P·S?"
        ),
        _share,
        lambda p, fn: fn(p["layers"], p["hidden"], _params_of(p), p["s"]),
        lambda p: [
            Step("=", N_("attention: 12·L·S²·d per sequence"), 12 * p["layers"] * p["s"] ** 2 * p["hidden"], "FLOP"),
            Step("÷", N_("weights: 6·P·S"), 6 * _params_of(p) * p["s"], "FLOP"),
        ],
        "ratio",
        ("%",),
        rtol=0.01,
        source=N_("the 6N rule leaves out attention; it grows with S"),
    ),
    T(
        "l27.training_memory_optimizer",
        (*FN, "training_memory"),
        "memory",
        1,
        27,
        lambda p: _(
            "A {billions}B model, bf16 weights and gradients, {opt_0} keeping {opt_1} bytes of "
            "optimizer state per parameter: static training memory, no sharding?"
        ).format(billions=p["billions"], opt_0=_(p["opt"][0]), opt_1=p["opt"][1]),
        _mem,
        lambda p, fn: fn(p["n"], 2, 2, p["opt"][1])["total"],
        lambda p: [
            Step("=", N_("bf16 weights 2 B × Ψ"), 2 * p["n"], "B"),
            Step("+", N_("bf16 gradients 2 B × Ψ"), 2 * p["n"], "B"),
            Step("+", N_("optimizer {opt_1} B × Ψ"), p["opt"][1] * p["n"], "B", args={"opt_1": p["opt"][1]}),
        ],
        "B",
        ("GB", "GiB", "TB", "B"),
        source=N_("ZeRO paper's K: 12 for mixed-precision Adam"),
    ),
]
