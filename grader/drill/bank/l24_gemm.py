"""L24 · GEMM tiling: a tile's arithmetic intensity and a tiled GEMM's HBM traffic."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l24_gemm", "gemm")


def _tile(rng: random.Random) -> Params:
    return {"bm": rng.choice([32, 64, 128, 256]), "bn": rng.choice([32, 64, 128, 256]), "e": rng.choice([1, 2, 4])}


def _gemm(rng: random.Random) -> Params:
    return {
        **_tile(rng),
        "m": rng.choice([1000, 2048, 4096, 8192]),
        "n": rng.choice([1000, 4096, 8192]),
        "k": rng.choice([1024, 4096, 8192]),
    }


def _gemm_steps(p: Params) -> list[Step]:
    m, n, k, e = p["m"], p["n"], p["k"], p["e"]
    return [
        Step(
            "=",
            N_("A: m·k × {e} B, re-read by ceil(n/BN) = {math_ceil_n_bn} tile columns"),
            m * k * e * math.ceil(n / p["bn"]),
            "B",
            args={"e": e, "math_ceil_n_bn": math.ceil(n / p["bn"])},
        ),
        Step(
            "+",
            N_("B: k·n × {e} B, re-read by ceil(m/BM) = {math_ceil_m_bm} tile rows"),
            k * n * e * math.ceil(m / p["bm"]),
            "B",
            args={"e": e, "math_ceil_m_bm": math.ceil(m / p["bm"])},
        ),
        Step("+", N_("C written once"), m * n * e, "B"),
    ]


TEMPLATES = [
    T(
        "l24.tile_intensity",
        (*FN, "tile_intensity"),
        "kernels",
        2,
        24,
        N_(
            "A GEMM tile of BLOCK_M = {bm} × BLOCK_N = {bn}, {e}-byte elements: per step of k, "
            "how many FLOPs per byte loaded from global memory?"
        ),
        _tile,
        lambda p, fn: fn(p["bm"], p["bn"], p["e"]),
        lambda p: [
            Step("=", N_("FLOPs per k-step: 2·BM·BN"), 2 * p["bm"] * p["bn"], "FLOP"),
            Step("÷", N_("bytes loaded per k-step: (BM + BN) × elem"), (p["bm"] + p["bn"]) * p["e"], "B"),
        ],
        "1",
        rtol=0.01,
        source=N_("tiling raises reuse: intensity grows with the tile, not with K"),
    ),
    T(
        "l24.tiled_gemm_bytes",
        (*FN, "tiled_gemm_hbm_bytes"),
        "kernels",
        3,
        24,
        N_(
            "A tiled GEMM, m = {m}, n = {n}, k = {k}, tiles {bm} × {bn}, {e}-byte elements, no L2 "
            "reuse: how many bytes move between HBM and the SMs?"
        ),
        _gemm,
        lambda p, fn: fn(p["m"], p["n"], p["k"], p["bm"], p["bn"], p["e"]),
        _gemm_steps,
        "B",
        ("GB", "MB", "GiB", "B"),
        source=N_("each tile row re-reads B, each tile column re-reads A"),
    ),
]

TILES = ["32 × 32", "64 × 64", "128 × 64", "128 × 128", "256 × 128"]

TEMPLATES += [
    T(
        "l24.tile_order",
        (*FN, "tile_intensity"),
        "kernels",
        1,
        24,
        N_("Order these GEMM tile shapes (BLOCK_M × BLOCK_N, fp16) by arithmetic intensity per k-step, lowest first."),
        lambda rng: {"tiles": rng.sample(TILES, 4)},
        lambda p, fn: sorted(p["tiles"], key=lambda t: fn(*map(int, t.split(" × ")), 2)),
        lambda p: [
            Step(
                "=",
                N_("{t}: 2·BM·BN/(2·(BM+BN))"),
                int(t.split(" × ")[0]) * int(t.split(" × ")[1]) / (int(t.split(" × ")[0]) + int(t.split(" × ")[1])),
                args={"t": t},
            )
            for t in p["tiles"]
        ],
        kind="order",
        options=lambda p: list(p["tiles"]),
    ),
]
