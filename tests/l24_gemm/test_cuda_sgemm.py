"""L24 · the tiled SGEMM in CUDA: numba's sgemm_tiled in the simulator, sgemm.cu by NVRTC and run (GPU or CPU executor).

The simulator runs ~2 s per 16 × 16 block on these machines: shapes stay at one or two tiles per
dimension, and one traced run serves both efficiency tests.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from grader.kit import (
    SubmissionError,
    Tolerance,
    assert_close,
    award_speedup,
    cuda,
    cuda_kernel,
    grade,
    learner,
    learner_value,
    on_device,
    perf,
)

UNIT = "l24_gemm"
TILE = 16  # sgemm.cu's tile (its launch configuration); cuda_sgemm.py's is read from the learner's file
sgemm_tiled = learner(UNIT, "cuda_sgemm", "sgemm_tiled", audited=True)  # numba: audited (R3.2)
sgemm_cu = cuda_kernel(UNIT, "sgemm", "sgemm_cu", kernel="sgemm_tiled")  # sgemm.cu, beside the numba exercise
# fp32 accumulation over K products: a few ulps of sqrt(K)·|a||b| (fp64 reference, TF32 not involved)
SGEMM_TOL = Tolerance(atol=1e-5, rtol=1e-5)


def operands(m: int, n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)


def run(m: int, n: int, k: int, seed: int) -> cuda.SimTraffic:
    a, b = operands(m, n, k, seed)
    c, traffic = cuda.run_sim_kernel("sgemm_tiled", sgemm_tiled, a, b)
    want = torch.from_numpy(a).double() @ torch.from_numpy(b).double()
    assert_close(torch.from_numpy(c), want, dtype=torch.float32, tol=SGEMM_TOL,
                 what=f"sgemm_tiled(a: {m}×{k}, b: {k}×{n} float32)")
    return traffic


@functools.cache
def traced_run() -> cuda.SimTraffic:
    """32 × 16 × 32: two blocks, two k-steps (one traced simulation for both efficiency tests)."""
    return run(32, 16, 32, seed=3)


def learner_tile() -> int:
    """cuda_sgemm.TILE of the target: another tile size is a correct alternative, graded by its own ledger."""
    tile = learner_value(UNIT, "cuda_sgemm", "TILE")
    if not isinstance(tile, int) or tile not in (8, 16, 32):
        raise SubmissionError(f"cuda_sgemm.TILE must be 8, 16 or 32 (a warp covers whole rows), got {tile!r}")
    return tile


def tiled_ledger_bytes(m: int, n: int, k: int, tile: int) -> tuple[int, int]:
    """(loaded, stored) bytes of a tile × tile SGEMM: A once per block column, B once per block row."""
    return 4 * (m * k * math.ceil(n / tile) + k * n * math.ceil(m / tile)), 4 * m * n


@grade(sgemm_tiled, "correctness", points=4,
       hint="K = 40 is not a multiple of 16: what does the last k-step stage past the end of A's row?")
@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (17, 5, 40)])
def test_sgemm_tiled_matches(m, n, k):
    """1 × 1 × 1, and tails in M, N and K at once: equals a @ b (fp64 reference, fp32 tolerance)."""
    run(m, n, k, seed=m + n + k)


@grade(sgemm_tiled, "efficiency", points=3,
       hint="How many times does each block load each element of its A and B tiles from global memory?")
def test_sgemm_tiled_traffic_matches_the_tiled_ledger():
    """Global bytes loaded and stored equal the tiled ledger of the kernel's TILE exactly; one launch."""
    t = traced_run()
    tile = learner_tile()
    loaded, stored = tiled_ledger_bytes(32, 16, 32, tile)
    assert t.launches == 1, f"{t.launches} launches, expected 1 ({t.summary()})"
    assert (t.bytes_loaded, t.bytes_stored) == (loaded, stored), (
        f"loaded {t.bytes_loaded:,} B and stored {t.bytes_stored:,} B; the tiled ledger says {loaded:,} B loaded "
        f"(A ⌈N/{tile}⌉ times, B ⌈M/{tile}⌉ times) and {stored:,} B stored ({t.summary()})")


@grade(sgemm_tiled, "efficiency", points=3,
       hint="Which of threadIdx.x and threadIdx.y walks the contiguous dimension of A, B and C?")
def test_sgemm_tiled_coalesced_and_conflict_free():
    """Every global warp request at 100 % sector use (4 sectors per 32 floats); shared tiles conflict-free."""
    t = traced_run()
    for kind, requests, sectors in (("loads", t.load_requests, t.load_sectors),
                                    ("stores", t.store_requests, t.store_sectors)):
        assert sectors == 4 * requests, (
            f"global {kind}: {sectors / requests:.1f} sectors per warp request, 4 when the 32 lanes read 128 "
            f"contiguous bytes ({t.summary()})")
    assert t.shared_requests and t.max_conflict_degree == 1, (
        f"shared memory: worst request {t.max_conflict_degree}-way bank conflict ({t.summary()})")


# ---- sgemm.cu: NVRTC here; correctness on a GPU, or on the CPU executor where none is lent ------------


@grade(sgemm_cu, "efficiency", points=3,
       hint="Does every k-step load its tiles into __shared__ arrays, and wait for all threads twice?")
def test_sgemm_cu_stages_tiles_in_shared_memory():
    """NVRTC sm_90: two 16 × 16 fp32 tiles in shared memory, ld.shared in the loop, barriers around it, no spills."""
    c = cuda.compile_learner(UNIT, sgemm_cu.module, sgemm_cu.kernel)
    r = c.kernel(sgemm_cu.kernel)
    ptx = c.ptx_of(sgemm_cu.kernel)
    assert r.smem_bytes >= 2 * TILE * TILE * 4, (
        f"sgemm_tiled uses {r.smem_bytes} B of shared memory; staging a 16 × 16 tile of A and one of B takes "
        f"{2 * TILE * TILE * 4} B ({r.summary()})")
    assert cuda.ptx_instructions(ptx, "ld.shared"), "sgemm_tiled never reads shared memory: multiply out of the tiles"
    barriers = len(cuda.ptx_instructions(ptx, "bar.sync"))
    double_buffered = r.smem_bytes >= 4 * TILE * TILE * 4
    assert barriers >= 2 or (barriers == 1 and double_buffered), (
        f"sgemm_tiled has {barriers} __syncthreads(): one after staging the tiles, and one after using them so "
        "the next k-step does not overwrite a tile another warp still reads")
    assert r.spill_stores == r.spill_loads == 0 and r.stack_bytes == 0, f"sgemm_tiled spills: {r.summary()}"


def _require_gpu_kernel() -> None:
    """A GPU to run on ("pending GPU" without one) and no TODO left in sgemm_tiled."""
    cuda.require_device()
    cuda.load_cu(UNIT, sgemm_cu.module).require_done(sgemm_cu.kernel)


def run_sgemm_cu(m: int, n: int, k: int, seed: int, *, device: str) -> torch.Tensor:
    """On the device (on_device): sgemm.cu's C for ``operands(m, n, k, seed)`` (a GPU, or the CPU executor)."""
    source = cuda.load_cu(UNIT, sgemm_cu.module)
    a, b = (torch.from_numpy(t).to(device) for t in operands(m, n, k, seed=seed))
    c = torch.full((m, n), float("nan"), device=device)
    grid = (math.ceil(n / TILE), math.ceil(m / TILE))
    cuda.run_kernel(source, sgemm_cu.kernel, grid, (TILE, TILE), [a, b, c, m, n, k], device=device)
    return c


def count_sgemm_banks(*, device: str) -> dict:
    """On the device (on_device): the shared-memory bank conflicts of sgemm.cu per line (32³: 2 × 2 blocks, two
    k-steps), counted on the CPU executor; shown in the results, not scored."""
    source = cuda.load_cu(UNIT, sgemm_cu.module)
    a, b = (torch.from_numpy(t) for t in operands(32, 32, 32, seed=1))
    c = torch.zeros(32, 32)
    return cuda.bank_conflicts(source, sgemm_cu.kernel, (2, 2), (TILE, TILE), [a, b, c, 32, 32, 32]).as_dict()


@grade(sgemm_cu, "correctness", points=4, hint="Tails: does the last k-step stage zeros outside A and B?")
@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (100, 70, 45), (512, 512, 512)])
def test_sgemm_cu_matches(m, n, k, award):
    """On a GPU or the CPU executor: equals A @ B in fp64 for tails and a larger square (TF32 off); the
    100 × 70 × 45 case also records the kernel's shared-memory bank conflicts per line (information only)."""
    device = cuda.kernel_device()
    cuda.load_cu(UNIT, sgemm_cu.module).require_done(sgemm_cu.kernel)
    c = on_device(run_sgemm_cu, m, n, k, k, device=device)
    a, b = (torch.from_numpy(t) for t in operands(m, n, k, seed=k))
    tol = Tolerance(atol=1e-5 * math.sqrt(k), rtol=1e-5)
    assert_close(c, a.double() @ b.double(), dtype=torch.float32, tol=tol, what=f"sgemm_tiled {m}×{n}×{k}")
    if (m, n, k) == (100, 70, 45) and cuda.can_count_banks():
        award(1.0, bank_conflicts=on_device(count_sgemm_banks, device="cpu"))


SPEED_ROWS = slice(0, 128)  # rows of C checked in fp64 by the grader after the timing run


def time_sgemm_cu(n: int, *, device: str) -> dict:
    """On the device (on_device): one checked launch, then the timing against cuBLAS SGEMM (TF32 off)."""
    kernel = cuda.load_cu(UNIT, sgemm_cu.module).compile(arch=cuda.device_arch())
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = (torch.from_numpy(t).to(device) for t in operands(n, n, n, seed=24))
    c = torch.empty(n, n, device=device)
    grid = (n // TILE, n // TILE)
    launch = lambda: cuda.launch(kernel, sgemm_cu.kernel, grid, (TILE, TILE), [a, b, c, n, n, n])
    launch()
    checked = c[SPEED_ROWS].clone()
    return {"c": checked, "perf": perf.compare({"learner": launch, "cuBLAS": lambda: torch.matmul(a, b)}).as_dict()}


@grade(sgemm_cu, "gpu_perf", points=2,
       hint="A 16 × 16 tile reuses each loaded element 16 times: what limits it next (L24 §3)?")
def test_sgemm_cu_speed(award):
    """2048³ fp32 against cuBLAS SGEMM (TF32 off): full marks at 10 % of cuBLAS, the level of this tiling."""
    _require_gpu_kernel()
    n = 2048
    r = on_device(time_sgemm_cu, n, device="cuda")
    a, b = (torch.from_numpy(t).double() for t in operands(n, n, n, seed=24))
    assert_close(r["c"], a[SPEED_ROWS] @ b, dtype=torch.float32, tol=Tolerance(atol=1e-5 * math.sqrt(n), rtol=1e-5),
                 what=f"sgemm_tiled {n}³ (rows 0-127)")
    award_speedup(award, r["perf"], over="cuBLAS", full_at=0.10, label="fraction_of_cublas")
