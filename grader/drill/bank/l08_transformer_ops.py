"""L08 · A LLaMA decoder on paper: parameters by part, KV bytes per token."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T, shape
from grader.i18n import N_

FN = ("l08_transformer_ops", "transformer_ops")


def _shape(rng: random.Random) -> Params:
    return shape(rng, {"dtype": rng.choice(["bf16", "fp8"])})


def _attn_steps(p: Params) -> list[Step]:
    h, kvd = p["hidden"], p["kv"] * p["head_dim"]
    return [
        Step("=", N_("Wq h·h + Wo h·h"), 2 * h * h),
        Step("+", N_("Wk + Wv: 2 · h · (KV heads × head dim)"), 2 * h * kvd),
        Step("×", N_("layers"), p["layers"]),
    ]


def _ffn_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("W_gate, W_up, W_down: 3 · h · f"), 3 * p["hidden"] * p["ffn"]),
        Step("×", N_("layers"), p["layers"]),
    ]


def _total_steps(p: Params) -> list[Step]:
    h, kvd, layers = p["hidden"], p["kv"] * p["head_dim"], p["layers"]
    return [
        Step("=", N_("attention: (2·h·h + 2·h·h_kv) × L"), (2 * h * h + 2 * h * kvd) * layers),
        Step("+", N_("SwiGLU FFN: 3·h·f × L"), 3 * h * p["ffn"] * layers),
        Step("+", N_("RMSNorm weights: 2·h × L + final h"), 2 * h * layers + h),
        Step("+", N_("embedding + untied LM head: 2 · vocab · h"), 2 * p["vocab"] * h),
    ]


def _kv_steps(p: Params) -> list[Step]:
    e = 2 if p["dtype"] == "bf16" else 1
    return [
        Step("=", N_("one K and one V"), 2),
        Step("×", N_("layers"), p["layers"]),
        Step("×", N_("KV heads"), p["kv"]),
        Step("×", N_("head dim"), p["head_dim"]),
        Step("×", N_("{dtype} bytes"), e, "B", args={"dtype": p["dtype"]}),
    ]


def _args(p: Params) -> tuple:
    return p["hidden"], p["layers"], p["ffn"], p["vocab"], p["heads"], p["kv"]


TEMPLATES = [
    T(
        "l08.llama_params_total",
        (*FN, "llama_params"),
        "memory",
        3,
        8,
        N_(
            "{model}: hidden {hidden}, {layers} layers, {heads} heads ({kv} KV heads), SwiGLU FFN "
            "{ffn}, vocab {vocab}, untied embeddings, no biases. How many parameters?"
        ),
        _shape,
        lambda p, fn: fn(*_args(p)),
        _total_steps,
        "1",
        rtol=0.01,
        source=N_("LLaMA architecture (Touvron et al. 2023): no biases, RMSNorm, SwiGLU"),
    ),
    T(
        "l08.llama_attention_params",
        (*FN, "llama_param_ledger"),
        "memory",
        2,
        8,
        N_(
            "{model}: hidden {hidden}, {layers} layers, {heads} query heads and {kv} KV heads of "
            "{head_dim}. How many attention parameters (Wq, Wk, Wv, Wo over all layers)?"
        ),
        _shape,
        lambda p, fn: fn(*_args(p))["attention"],
        _attn_steps,
        "1",
        rtol=0.01,
        source=N_("GQA: K and V project to KV heads × head dim only"),
    ),
    T(
        "l08.llama_ffn_params",
        (*FN, "llama_param_ledger"),
        "memory",
        1,
        8,
        N_("{model}: hidden {hidden}, SwiGLU FFN width {ffn}, {layers} layers. How many FFN parameters in all?"),
        _shape,
        lambda p, fn: fn(*_args(p))["ffn"],
        _ffn_steps,
        "1",
        rtol=0.01,
        source=N_("SwiGLU has three matrices"),
    ),
    T(
        "l08.kv_bytes_per_token",
        (*FN, "kv_bytes_per_token"),
        "serving",
        1,
        8,
        N_(
            "{model}: {layers} layers, {kv} KV heads of dimension {head_dim}, KV cache in "
            "{dtype}. How many bytes of KV cache does one token hold?"
        ),
        _shape,
        lambda p, fn: fn(p["layers"], p["kv"], p["head_dim"], 2 if p["dtype"] == "bf16" else 1),
        _kv_steps,
        "B",
        ("KiB", "KB", "MB", "B"),
        source=N_("2 (K and V) × L × H_kv × d × bytes: one factor of 2 (CONVENTIONS.md)"),
    ),
]

TEMPLATES += [
    T(
        "l08.embedding_params",
        (*FN, "llama_param_ledger"),
        "memory",
        1,
        8,
        N_("{model}: vocabulary {vocab}, hidden {hidden}. How many parameters in the input embedding?"),
        _shape,
        lambda p, fn: fn(*_args(p))["embedding"],
        lambda p: [Step("=", N_("vocab"), p["vocab"]), Step("×", N_("hidden"), p["hidden"])],
        "1",
        rtol=1e-5,
    ),
]
