"""L24 · Shared-memory tiled SGEMM in CUDA (numba.cuda), graded in the CUDA simulator.

Lecture 24's first step past the naive kernel (§2): a block of TILE × TILE threads owns a TILE × TILE
tile of C. It walks k in steps of TILE; at each step the block stages a TILE × TILE tile of A and
one of B in shared memory (each thread loads one element of each), synchronizes, and every thread
does TILE multiply-adds out of shared memory. Each element of A is then read from global memory
once per block *column* (⌈N / TILE⌉ times) instead of once per output element (N times): the
tiled ledger

    bytes loaded = 4 · (M·K·⌈N / TILE⌉ + K·N·⌈M / TILE⌉),   bytes stored = 4 · M·N.

threadIdx.x runs along the contiguous dimension of every global access (columns of A's tile, of
B's tile and of C), so each warp request is coalesced; reads of A's tile along a row are broadcasts
and reads of B's tile along a row are consecutive words: no bank conflicts. A second
``cuda.syncthreads()`` after the inner loop keeps a fast warp from overwriting a tile others still read.
Tails: M, N and K need not be multiples of TILE; out-of-range elements are staged as 0.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

TILE = 16  # a block is TILE × TILE threads and owns a TILE × TILE tile of C


@cuda.jit
def _sgemm_tiled_kernel(a, b, c):
    """Block (bx, by), thread (tx, ty) computes c[by·TILE + ty, bx·TILE + tx]."""
    # Plan: 1. a_tile, b_tile = two cuda.shared.array((TILE, TILE), numba.float32)
    #       2. for k0 in range(0, K, TILE): stage a[row, k0 + tx] and b[k0 + ty, col] (0.0 outside
    #          the matrices), syncthreads, acc += a_tile[ty, kk] * b_tile[kk, tx] for kk < TILE,
    #          syncthreads
    #       3. store acc to c[row, col] if inside C.
    #       Graded: global bytes = the tiled ledger; coalesced requests; no bank conflicts.
    # TODO: write the tiled kernel following the plan.
    raise NotImplementedError('TODO: write the tiled kernel following the plan.')


def sgemm_tiled(a, b):
    """``a @ b`` for float32 device arrays a (M × K) and b (K × N): a new M × N device array.

    One launch of ``_sgemm_tiled_kernel`` with TILE × TILE blocks covering C (threadIdx.x along N).
    """
    if a.ndim != 2 or b.ndim != 2 or a.dtype != np.float32 or b.dtype != np.float32 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected float32 matrices a (M×K) and b (K×N), got {a.shape} {a.dtype}, {b.shape} {b.dtype}")
    # TODO: allocate c on the device and launch one TILE × TILE block per tile of c.
    raise NotImplementedError('TODO: allocate c on the device and launch one TILE × TILE block per tile of c.')
