"""L22 · transpose_smem in numba.cuda, run in the CUDA simulator: result, coalescing, bank conflicts.

The simulator runs each thread as a Python thread (~0.6 s per 256-thread block), so shapes stay at
a few 32 × 32 tiles. What is graded is what the lecture measures on a GPU, counted exactly here:
32-byte sectors per warp request (coalescing) and bank conflicts per shared-memory request.
"""

from __future__ import annotations

import numpy as np
import pytest

from grader.kit import cuda, grade, learner

UNIT = "l22_memory_coalescing"
transpose_smem = learner(UNIT, "cuda_transpose", "transpose_smem", audited=True)  # numba: audited (R3.2)


def make(n_rows: int, n_cols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.permutation(n_rows * n_cols).reshape(n_rows, n_cols).astype(np.float32) / 8


def run(x: np.ndarray) -> tuple[np.ndarray, cuda.SimTraffic]:
    y, traffic = cuda.run_sim_kernel("transpose_smem", transpose_smem, x)
    what = f"transpose_smem(x: {x.shape[0]}×{x.shape[1]} float32)"
    assert y.shape == (x.shape[1], x.shape[0]), f"{what}: shape {y.shape}, expected {(x.shape[1], x.shape[0])}"
    bad = np.argwhere(y != x.T)
    if bad.size:
        i, j = bad[0]
        raise AssertionError(f"{what}: {len(bad)} of {y.size} elements wrong; first y[{i}, {j}] = {y[i, j]}, "
                             f"expected x[{j}, {i}] = {x[j, i]}")
    return y, traffic


@grade(transpose_smem, "correctness", points=3,
       hint="Partial tiles: does every read and every write check its row and column against the matrix?")
@pytest.mark.parametrize("shape", [(40, 70), (1, 33), (33, 1), (32, 32)])
def test_transpose_smem_matches(shape):
    """Tails in both dimensions, a single row and column, one exact tile: y == x.T, every element written."""
    run(make(*shape, seed=sum(shape)))


@grade(transpose_smem, "efficiency", points=3,
       hint="Which index does threadIdx.x drive on the read of x, and which on the write of y?")
def test_transpose_smem_is_coalesced():
    """64 × 64 fp32: each element read once and written once, every warp request 4 sectors (128 B, 100 %)."""
    x = make(64, 64, seed=1)
    _, t = run(x)
    nbytes = x.nbytes
    assert t.bytes_loaded == nbytes and t.bytes_stored == nbytes, (
        f"global traffic {t.bytes_loaded:,} B loaded / {t.bytes_stored:,} B stored, the ledger says {nbytes:,} each"
        f" ({t.summary()})")
    for kind, requests, sectors in (("read of x", t.load_requests, t.load_sectors),
                                    ("write of y", t.store_requests, t.store_sectors)):
        assert sectors == 4 * requests, (
            f"the {kind} touches {sectors / requests:.1f} sectors per warp request, a coalesced warp of 32 "
            f"floats touches 4: {t.summary()}")


@grade(transpose_smem, "efficiency", points=3,
       hint="A column of a 32 × 32 float tile sits in one bank: what does one extra word per row change?")
def test_transpose_smem_has_no_bank_conflicts():
    """64 × 64 fp32: the tile is staged in shared memory and no warp request hits a bank twice."""
    _, t = run(make(64, 64, seed=2))
    assert t.shared_requests >= 2 * t.store_requests, (
        f"only {t.shared_requests} shared-memory warp requests for {t.store_requests} global stores: stage each "
        "tile in cuda.shared.array and read it back transposed")
    assert t.max_conflict_degree == 1, (
        f"shared memory: {t.shared_wavefronts} bank wavefronts for {t.shared_requests} warp requests, worst "
        f"{t.max_conflict_degree}-way conflict; conflict-free means one wavefront per request")
