"""L22 · The CUDA memory hierarchy: sectors per warp request, occupancy."""

from __future__ import annotations

import math
import random

from grader.constants import GPUS
from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l22_memory_coalescing", "ledger")


def _stride(rng: random.Random) -> Params:
    return {"stride": rng.choice([1, 2, 3, 4, 8, 16, 32]), "e": rng.choice([2, 4, 8])}


def _sectors(p: Params) -> list[Step]:
    s, e = p["stride"], p["e"]
    sectors = {b // 32 for t in range(32) for b in range(t * s * e, t * s * e + e)}
    return [
        Step(
            "=",
            N_("32 threads × {e} B at a stride of {s_e} B, in 32-byte sectors: {len_sectors} distinct"),
            len(sectors),
            args={"e": e, "s_e": s * e, "len_sectors": len(sectors)},
        )
    ]


def _occ(rng: random.Random) -> Params:
    while True:  # only launch configurations that fit on an SM
        p = _draw(rng)
        if _blocks(p) >= 1:
            return p


def _draw(rng: random.Random) -> Params:
    return {
        "gpu": rng.choice(["A100-80G", "H100-SXM"]),
        "threads": rng.choice([128, 256, 512, 1024]),
        "regs": rng.choice([32, 64, 96, 128, 168]),
        "smem_kib": rng.choice([0, 16, 32, 48, 64, 100]),
    }


def _blocks(p: Params) -> int:
    g = GPUS[p["gpu"]]
    warps = p["threads"] // 32
    regs_per_warp = math.ceil(p["regs"] * 32 / g.reg_alloc_unit) * g.reg_alloc_unit
    limits = [g.max_blocks_per_sm, g.max_threads_per_sm // p["threads"], g.registers_per_sm // (regs_per_warp * warps)]
    if p["smem_kib"]:
        smem = math.ceil(p["smem_kib"] * 1024 / g.smem_alloc_unit) * g.smem_alloc_unit + g.smem_reserved_per_block
        limits.append(g.smem_per_sm // smem)
    return min(limits)


def _occ_steps(p: Params) -> list[Step]:
    warps = p["threads"] // 32
    return [
        Step(
            "=", N_("blocks per SM: the tightest of the block, thread, register and shared-memory limits"), _blocks(p)
        ),
        Step("×", N_("warps per block"), warps),
        Step("÷", N_("maximum warps per SM"), 64),
    ]


TEMPLATES = [
    T(
        "l22.warp_sectors",
        (*FN, "warp_sectors"),
        "kernels",
        2,
        22,
        N_(
            "A warp's thread t reads the {e}-byte element t × {stride} of an aligned array. How "
            "many 32-byte sectors does the request touch?"
        ),
        _stride,
        lambda p, fn: fn(p["stride"], p["e"]),
        _sectors,
        "1",
        rtol=1e-9,
        source=N_("global memory moves 32-byte sectors (CUDA C Best Practices Guide, coalescing)"),
    ),
    T(
        "l22.occupancy",
        (*FN, "occupancy"),
        "kernels",
        3,
        22,
        N_(
            "{gpu}: a kernel with {threads} threads per block, {regs} registers per thread and "
            "{smem_kib} KiB of shared memory per block. What is its theoretical occupancy "
            "(resident warps / 64)?"
        ),
        _occ,
        lambda p, fn: fn(p["threads"], p["regs"], p["smem_kib"] * 1024, p["gpu"]),
        _occ_steps,
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_(
            "CUDA Occupancy Calculator rules (registers per warp in units of 256, 1 KB reserved "
            "shared memory per block)"
        ),
    ),
]

TEMPLATES += [
    T(
        "l22.blocks_per_sm",
        (*FN, "blocks_per_sm"),
        "kernels",
        3,
        22,
        N_(
            "{gpu}: {threads} threads per block, {regs} registers per thread, {smem_kib} KiB of "
            "shared memory per block. How many blocks can one SM hold at once?"
        ),
        _occ,
        lambda p, fn: fn(p["threads"], p["regs"], p["smem_kib"] * 1024, p["gpu"]),
        lambda p: [
            Step(
                "=",
                N_(
                    "the tightest of: 32 blocks, 2048 threads / block threads, registers (per warp in "
                    "256s), shared memory (128 B units + 1 KiB reserved)"
                ),
                _blocks(p),
            )
        ],
        "1",
        rtol=1e-9,
    ),
]
