"""L23 · The block reduction in CUDA (numba.cuda): sequential addressing, run in the CUDA simulator.

The lecture's reduction ladder (interleaved → sequential addressing → warp shuffle) sums a vector
in shared memory, halving the active threads each step:

* interleaved, ``if t % (2·s) == 0: buf[t] += buf[t + s]`` for s = 1, 2, 4...: the active threads
  are scattered over every warp (divergence: each warp issues the step with few lanes working);
* interleaved with a strided index, ``i = 2·s·t; buf[i] += buf[i + s]``: active threads are packed,
  but lane t touches word 2·s·t: a 2-, 4-, ... way bank conflict;
* **sequential addressing**, ``if t < s: buf[t] += buf[t + s]`` for s = BLOCK/2, ..., 1: the active
  threads are the first s (whole warps while s >= 32) and a warp reads 32 consecutive words
  (conflict-free). This is the version to write here; the warp-shuffle version is CUDA C++
  (``cuda_reduce.cu``), because numba's simulator has no shuffles.

Each block first adds two elements per thread while loading (x[i] + x[i + BLOCK]), so a block of
BLOCK threads reduces 2·BLOCK elements and x is read exactly once. One launch leaves one partial sum
per block; the launcher repeats on the partials until one value is left.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

BLOCK = 128  # threads per block (a power of two); each block reduces 2 * BLOCK elements


@cuda.jit
def _block_sum_kernel(x, partials):
    """partials[b] = sum of x[b·2·BLOCK : (b + 1)·2·BLOCK] (the tail of x may be shorter)."""
    # Plan: 1. buf = cuda.shared.array(BLOCK, numba.float32); each thread stores x[i] + x[i + BLOCK]
    #          (0.0 past the end of x), then cuda.syncthreads()
    #       2. for s = BLOCK // 2, ..., 1: threads t < s add buf[t + s] into buf[t]; syncthreads
    #       3. thread 0 writes buf[0] to partials[blockIdx.x].
    #       Graded: x read once; no bank conflict; no more shared-memory warp requests than
    #       sequential addressing issues.
    # TODO: write the kernel body following the plan (sequential addressing).
    raise NotImplementedError('TODO: write the kernel body following the plan (sequential addressing).')


def block_sum(x):
    """The sum of a 1-D float32 device array, as a device array of shape (1,), accumulated in float32.

    x must hold at least one element. Launch ``_block_sum_kernel`` with BLOCK threads per block over
    x, then over the partial sums, until one value is left (each launch allocates its partials
    with ``cuda.device_array``).
    """
    if x.ndim != 1 or x.dtype != np.float32 or x.shape[0] < 1:
        raise ValueError(f"x must be a non-empty 1-D float32 device array, got {x.ndim}-D {x.dtype} {x.shape}")
    # TODO: launch the kernel over x, then over the partials, until one partial is left; return it.
    raise NotImplementedError('TODO: launch the kernel over x, then over the partials, until one partial is left; return it.')
