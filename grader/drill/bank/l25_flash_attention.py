"""L25 · FlashAttention's bytes: standard attention vs the tiled kernel, and the SRAM a tile needs."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l25_flash_attention", "attention")


def _attn(rng: random.Random) -> Params:
    return {
        "n": rng.choice([1024, 2048, 4096, 8192, 16384]),
        "d": rng.choice([64, 128]),
        "e": rng.choice([2, 4]),
        "bm": rng.choice([64, 128]),
        "bn": rng.choice([32, 64, 128]),
    }


def _std_steps(p: Params) -> list[Step]:
    n, d, e = p["n"], p["d"], p["e"]
    return [
        Step("=", N_("read Q and K, write S"), (2 * n * d + n * n) * e, "B"),
        Step("+", N_("read S, write P"), 2 * n * n * e, "B"),
        Step("+", N_("read P and V, write O"), (n * n + 2 * n * d) * e, "B"),
    ]


def _flash_steps(p: Params) -> list[Step]:
    n, d, e = p["n"], p["d"], p["e"]
    tiles = math.ceil(n / p["bm"])
    return [
        Step("=", N_("Q read once"), n * d * e, "B"),
        Step(
            "+",
            N_("K and V read once per Q tile: {tiles} tiles × 2·N·d"),
            tiles * 2 * n * d * e,
            "B",
            args={"tiles": tiles},
        ),
        Step("+", N_("O written once"), n * d * e, "B"),
        Step("+", N_("logsumexp: 4 B per row"), 4 * n, "B"),
    ]


TEMPLATES = [
    T(
        "l25.standard_attention_bytes",
        (*FN, "attention_hbm_bytes"),
        "kernels",
        2,
        25,
        N_(
            "Standard attention (S = QKᵀ and P = softmax(S) written to HBM), one head, N = {n}, d "
            "= {d}, {e}-byte elements: how many bytes of HBM traffic?"
        ),
        _attn,
        lambda p, fn: fn(p["n"], p["d"], p["e"]),
        _std_steps,
        "B",
        ("MB", "MiB", "GB", "B"),
        source=N_("FlashAttention (Dao et al. 2022), §2.2"),
    ),
    T(
        "l25.flash_attention_bytes",
        (*FN, "flash_attention_hbm_bytes"),
        "kernels",
        3,
        25,
        N_(
            "FlashAttention-2 forward, one head, N = {n}, d = {d}, Q tiles of {bm} rows, {e}-byte "
            "elements, non-causal: how many bytes of HBM traffic (Q, K, V, O and the fp32 "
            "logsumexp)?"
        ),
        _attn,
        lambda p, fn: fn(p["n"], p["d"], p["bm"], p["e"]),
        _flash_steps,
        "B",
        ("MB", "MiB", "GB", "B"),
        source=N_("FlashAttention-2 (Dao 2023): Q tiles outer, K/V tiles inner"),
    ),
    T(
        "l25.sram_tile_bytes",
        (*FN, "sram_tile_bytes"),
        "kernels",
        1,
        25,
        N_(
            "A FlashAttention program stages one Q tile of {bm} rows and one K and one V tile of "
            "{bn} rows each, head dim {d}, {e}-byte elements. How many bytes of shared memory do "
            "these tiles take?"
        ),
        _attn,
        lambda p, fn: fn(p["bm"], p["bn"], p["d"], p["e"]),
        lambda p: [
            Step("=", N_("Q tile BM·d"), p["bm"] * p["d"] * p["e"], "B"),
            Step("+", N_("K and V tiles 2·BN·d"), 2 * p["bn"] * p["d"] * p["e"], "B"),
        ],
        "B",
        ("KiB", "KB", "B"),
        source=N_("the S/P tile and the accumulator live in registers"),
    ),
]

FITS = [N_("fits in 228 KiB"), N_("does not fit")]

TEMPLATES += [
    T(
        "l25.tile_fits_h100",
        (*FN, "sram_tile_bytes"),
        "kernels",
        2,
        25,
        N_(
            "On an H100 (228 KiB of shared memory per SM), a FlashAttention program stages a Q "
            "tile of {bm} rows and K, V tiles of {bn} rows, head dim {d}, {e}-byte elements. Do "
            "the tiles fit in one SM's shared memory?"
        ),
        lambda rng: {
            **_attn(rng),
            "bm": rng.choice([64, 128, 256]),
            "bn": rng.choice([64, 128, 256]),
            "d": rng.choice([128, 256]),
        },
        lambda p, fn: FITS[0] if fn(p["bm"], p["bn"], p["d"], p["e"]) <= 228 * 1024 else FITS[1],
        lambda p: [Step("=", N_("Q tile + K and V tiles"), (p["bm"] + 2 * p["bn"]) * p["d"] * p["e"], "B")],
        kind="choice",
        options=lambda p: list(FITS),
    ),
]
