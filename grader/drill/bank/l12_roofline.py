"""L12 · The roofline: ridge points, attainable FLOP/s, GEMM intensity, shared-memory bank conflicts."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T, gpu
from grader.i18n import N_

FN = ("l12_roofline", "roofline")


def _ai(rng: random.Random) -> Params:
    return gpu(rng, {"ai": rng.choice([0.25, 0.5, 1, 2, 8, 32, 64, 128, 256, 512, 1024])})


def _gemm(rng: random.Random) -> Params:
    return {
        "m": rng.choice([1, 8, 64, 512, 4096]),
        "k": rng.choice([4096, 8192]),
        "n": rng.choice([4096, 14336]),
        "e": rng.choice([1, 2, 4]),
    }


def _gemm_steps(p: Params) -> list[Step]:
    m, k, n, e = p["m"], p["k"], p["n"], p["e"]
    return [
        Step("=", N_("FLOPs: 2·m·k·n"), 2 * m * k * n, "FLOP"),
        Step("÷", N_("bytes: {e} × (m·k + k·n + m·n)"), e * (m * k + k * n + m * n), "B", args={"e": e}),
    ]


def _attain_steps(p: Params) -> list[Step]:
    if p["ai"] * p["bw"] < p["peak"]:
        return [
            Step("=", N_("intensity (FLOP/B)"), p["ai"]),
            Step("×", N_("HBM bandwidth: below the ridge"), p["bw"], "B/s"),
        ]
    return [Step("=", N_("the compute roof: the intensity is past the ridge"), p["peak"], "FLOP/s")]


def _stride(rng: random.Random) -> Params:
    return {"stride": rng.choice([1, 2, 3, 4, 8, 16, 17, 24, 32, 33, 48, 64])}


TEMPLATES = [
    T(
        "l12.ridge_point",
        (*FN, "ridge_point"),
        "kernels",
        1,
        12,
        N_(
            "{gpu}: {peak_t:g} TFLOP/s dense bf16 and {bw_t:g} TB/s of HBM. Where is the ridge "
            "point of its roofline, in FLOP per byte?"
        ),
        gpu,
        lambda p, fn: fn(p["peak"], p["bw"]),
        lambda p: [Step("=", N_("peak"), p["peak"], "FLOP/s"), Step("÷", N_("bandwidth"), p["bw"], "B/s")],
        "1",
        rtol=0.01,
        source=N_("Williams, Waterman & Patterson 2009 (roofline)"),
    ),
    T(
        "l12.attainable_flops",
        (*FN, "attainable_flops"),
        "kernels",
        2,
        12,
        N_(
            "A kernel of arithmetic intensity {ai:g} FLOP/B on an {gpu} ({peak_t:g} TFLOP/s, "
            "{bw_t:g} TB/s): what FLOP/s can it reach at best?"
        ),
        _ai,
        lambda p, fn: fn(p["ai"], p["peak"], p["bw"]),
        _attain_steps,
        "FLOP/s",
        ("TFLOPS", "GFLOPS", "FLOP/s"),
        source=N_("roofline: min(peak, intensity × bandwidth)"),
    ),
    T(
        "l12.gemm_intensity",
        (*FN, "gemm_intensity"),
        "kernels",
        2,
        12,
        N_(
            "An (m×k)·(k×n) GEMM with m = {m}, k = {k}, n = {n}, {e}-byte elements, reading A and "
            "B once and writing C once: what is its arithmetic intensity in FLOP/B?"
        ),
        _gemm,
        lambda p, fn: fn(p["m"], p["k"], p["n"], p["e"]),
        _gemm_steps,
        "1",
        rtol=0.01,
        source=N_("ideal traffic (CONVENTIONS.md)"),
    ),
    T(
        "l12.bank_conflict_degree",
        (*FN, "bank_conflict_degree"),
        "kernels",
        2,
        12,
        N_(
            "Thread t of a warp reads 4-byte word t × {stride} of shared memory (32 banks). How "
            "many ways is the access serialized (the conflict degree)?"
        ),
        _stride,
        lambda p, fn: fn(p["stride"]),
        lambda p: [
            Step(
                "=",
                N_("gcd({stride}, 32): threads that share the busiest bank"),
                __import__("math").gcd(p["stride"], 32),
                args={"stride": p["stride"]},
            )
        ],
        "1",
        rtol=1e-9,
        source=N_("32 banks of 4 bytes; word w is in bank w mod 32"),
    ),
]
