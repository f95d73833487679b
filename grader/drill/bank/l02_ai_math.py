"""L02 · AI math: GEMM FLOPs and bytes, a linear layer's training FLOPs, LoRA parameters, bytes from units, strides."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

U = "l02_ai_math"
FN = (U, "ai_math")
DTYPES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def _gemm(rng: random.Random) -> Params:
    dtype = rng.choice(sorted(DTYPES))
    return {
        "m": rng.choice([1, 16, 512, 2048, 4096, 8192]),
        "k": rng.choice([1024, 4096, 5120, 8192, 14336]),
        "n": rng.choice([1024, 4096, 11008, 16384, 28672]),
        "dtype": dtype,
        "e": DTYPES[dtype],
    }


def _gemm_flops_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("2 FLOPs per multiply-add"), 2, "FLOP"),
        Step("×", N_("m"), p["m"]),
        Step("×", N_("k"), p["k"]),
        Step("×", N_("n"), p["n"]),
    ]


def _gemm_bytes_steps(p: Params) -> list[Step]:
    m, k, n, e = p["m"], p["k"], p["n"], p["e"]
    return [
        Step("=", N_("read A: m·k × {e} B"), m * k * e, "B", args={"e": e}),
        Step("+", N_("read B: k·n × {e} B"), k * n * e, "B", args={"e": e}),
        Step("+", N_("write C once: m·n × {e} B"), m * n * e, "B", args={"e": e}),
    ]


def _linear(rng: random.Random) -> Params:
    b, s = rng.choice([1, 4, 8, 16]), rng.choice([1024, 2048, 4096, 8192])
    return {
        "b": b,
        "s": s,
        "tokens": b * s,
        "d_in": rng.choice([2048, 4096, 8192]),
        "d_out": rng.choice([4096, 11008, 14336, 16384]),
    }


def _linear_steps(p: Params) -> list[Step]:
    one = 2 * p["tokens"] * p["d_in"] * p["d_out"]
    return [
        Step("=", N_("forward X·W: 2·T·d_in·d_out"), one, "FLOP"),
        Step("+", N_("backward to the input dX = G·Wᵀ: the same GEMM size"), one, "FLOP"),
        Step("+", N_("backward to the weight dW = Xᵀ·G: the same GEMM size"), one, "FLOP"),
    ]


def _lora(rng: random.Random) -> Params:
    d_in = rng.choice([2048, 4096, 5120, 8192])
    return {"d_in": d_in, "d_out": rng.choice([1024, d_in, 4 * d_in]), "rank": rng.choice([4, 8, 16, 32, 64])}


def _lora_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("A: rank × d_in"), p["rank"] * p["d_in"]),
        Step("+", N_("B: d_out × rank"), p["d_out"] * p["rank"]),
    ]


FACTORS = {"Gb": 10**9 / 8, "GB": 10**9, "GiB": 2**30, "MiB": 2**20, "Tb": 10**12 / 8, "TB": 10**12, "MB": 10**6}


def _bytes(rng: random.Random) -> Params:
    return {"amount": rng.choice([1, 2, 25, 80, 100, 200, 400, 800, 1600]), "u": rng.choice(sorted(FACTORS))}


def _bytes_steps(p: Params) -> list[Step]:
    word = {
        "Gb": "10⁹ bits = 1.25e8 B",
        "Tb": "10¹² bits = 1.25e11 B",
        "GB": "10⁹ B",
        "TB": "10¹² B",
        "MB": "10⁶ B",
        "GiB": "2³⁰ B",
        "MiB": "2²⁰ B",
    }[p["u"]]
    return [
        Step("=", N_("amount"), p["amount"]),
        Step("×", N_("one {u} = {word}"), FACTORS[p["u"]], "B", args={"u": p["u"], "word": word}),
    ]


def _strides(rng: random.Random) -> Params:
    return {
        "b": rng.choice([2, 4, 8]),
        "s": rng.choice([512, 2048, 4096]),
        "h": rng.choice([32, 64]),
        "d": rng.choice([64, 128]),
    }


TEMPLATES = [
    T(
        "l02.gemm_flops",
        (*FN, "gemm_ledger"),
        "flops",
        1,
        2,
        N_("C[m×n] = A[m×k]·B[k×n] with m = {m}, k = {k}, n = {n}: how many FLOPs?"),
        _gemm,
        lambda p, fn: fn(p["m"], p["k"], p["n"], p["e"])["flops"],
        _gemm_flops_steps,
        "FLOP",
        ("GFLOP", "TFLOP", "FLOP"),
        source=N_("a multiply-add is 2 FLOPs"),
    ),
    T(
        "l02.gemm_bytes",
        (*FN, "gemm_ledger"),
        "kernels",
        2,
        2,
        N_(
            "A {dtype} GEMM C[m×n] = A[m×k]·B[k×n], m = {m}, k = {k}, n = {n}, reading A and B "
            "once and writing C once: how many bytes of HBM traffic?"
        ),
        _gemm,
        lambda p, fn: fn(p["m"], p["k"], p["n"], p["e"])["bytes"],
        _gemm_bytes_steps,
        "B",
        ("MB", "MiB", "GB", "B"),
        source=N_("ideal traffic: each input read once, the output written once (CONVENTIONS.md)"),
    ),
    T(
        "l02.linear_train_flops",
        (*FN, "linear_train_flops"),
        "flops",
        2,
        2,
        N_(
            "A bias-free linear layer {d_in} → {d_out} trains on a batch of {b} × {s} tokens: "
            "forward plus both backward GEMMs, how many FLOPs?"
        ),
        _linear,
        lambda p, fn: fn(p["tokens"], p["d_in"], p["d_out"])["total"],
        _linear_steps,
        "FLOP",
        ("TFLOP", "GFLOP", "PFLOP"),
        source=N_("training = 3 GEMMs of the forward's size: the 6N rule per layer"),
    ),
    T(
        "l02.lora_params",
        (*FN, "lora_params"),
        "memory",
        1,
        2,
        N_("A LoRA adapter of rank {rank} on a {d_in} → {d_out} weight: how many trainable parameters?"),
        _lora,
        lambda p, fn: fn(p["d_in"], p["d_out"], p["rank"]),
        _lora_steps,
        "1",
        rtol=1e-5,
        source=N_("LoRA (Hu et al. 2021): W + B·A, A is r × d_in, B is d_out × r"),
    ),
    T(
        "l02.to_bytes",
        (*FN, "to_bytes"),
        "communication",
        1,
        2,
        N_("How many bytes are {amount} {u}? (b is a bit, B a byte; G = 10⁹, Gi = 2³⁰)"),
        _bytes,
        lambda p, fn: fn(p["amount"], p["u"]),
        _bytes_steps,
        "B",
        ("GB", "GiB", "MB", "B"),
        source=N_("SI prefixes for decimal units, IEC (Ki, Mi, Gi) for binary; 8 bits per byte"),
    ),
    T(
        "l02.contiguous_stride0",
        (*FN, "contiguous_strides"),
        "memory",
        1,
        2,
        N_("A contiguous tensor of shape ({b}, {s}, {h}, {d}): what is the stride of dimension 0, in elements?"),
        _strides,
        lambda p, fn: fn((p["b"], p["s"], p["h"], p["d"]))[0],
        lambda p: [
            Step("=", N_("size of dim 1"), p["s"]),
            Step("×", N_("size of dim 2"), p["h"]),
            Step("×", N_("size of dim 3"), p["d"]),
        ],
        "1",
        rtol=1e-5,
        source=N_("row-major: a stride is the product of the sizes to its right"),
    ),
]

TEMPLATES += [
    T(
        "l02.linear_forward_flops",
        (*FN, "linear_train_flops"),
        "flops",
        1,
        2,
        N_("A bias-free linear layer {d_in} → {d_out} on {b} × {s} tokens: how many FLOPs in the forward pass only?"),
        _linear,
        lambda p, fn: fn(p["tokens"], p["d_in"], p["d_out"])["forward"],
        lambda p: [
            Step("=", N_("2 FLOPs per multiply-add"), 2, "FLOP"),
            Step("×", N_("tokens"), p["tokens"]),
            Step("×", N_("d_in"), p["d_in"]),
            Step("×", N_("d_out"), p["d_out"]),
        ],
        "FLOP",
        ("GFLOP", "TFLOP", "FLOP"),
    ),
]
