"""L22 · The shared-memory transpose in CUDA (numba.cuda), padded so the tile has no bank conflicts.

The lecture's lab (§4.4–4.5): a block of 32 × 8 threads moves one 32 × 32 tile.

1. Coalesced read: thread (tx, ty) reads x[row0 + ty + 8k, col0 + tx] for k = 0..3 (a warp reads
   32 consecutive floats: 4 sectors) and writes tile[ty + 8k][tx] (a row of the tile: no conflict).
2. ``cuda.syncthreads()``: the whole tile is in shared memory before anyone reads it.
3. Coalesced write: thread (tx, ty) writes y[col0 + ty + 8k, row0 + tx] from tile[tx][ty + 8k], a
   *column* of the tile. With a 32 × 32 tile that column sits in one bank (bank = (32·r + c) mod 32
   = c): a 32-way conflict. Padding each row to 33 words spreads it over all 32 banks:
   bank = (33·r + c) mod 32 = (r + c) mod 32. An XOR swizzle of the column index works too.

In numba's dialect: ``cuda.shared.array((TILE, TILE + 1), numba.float32)``, ``cuda.threadIdx.x``,
``cuda.blockIdx.x``, ``cuda.syncthreads()``. Graded in numba's CUDA simulator on CPU: the result,
and the traced accesses (every warp request coalesced; no bank conflict on the tile).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

TILE = 32  # a tile is TILE × TILE elements
BLOCK_ROWS = 8  # a block is TILE × BLOCK_ROWS threads; each thread moves TILE // BLOCK_ROWS elements


@cuda.jit
def _transpose_tile_kernel(x, y):
    """Block (bx, by) moves x's tile at rows by·TILE, columns bx·TILE to y's tile at rows bx·TILE."""
    # TODO: stage the tile in a padded shared array, synchronize, write it out transposed
    #       (threadIdx.x must index the contiguous dimension of x on the read and of y on the write).
    raise NotImplementedError('TODO: stage the tile in a padded shared array, synchronize, write it out transposed (threadIdx.x must index the contiguous dimension of x on the read and of y on the write).')


def transpose_smem(x):
    """``x.T`` as a new device array, by the tiled shared-memory kernel.

    x: a 2-D float32 device array (``cuda.to_device``). Returns a device array of shape
    (x.shape[1], x.shape[0]) allocated with ``cuda.device_array``, every element written by the kernel.
    """
    if x.ndim != 2 or x.dtype != np.float32:
        raise ValueError(f"x must be a 2-D float32 device array, got {x.ndim}-D {x.dtype}")
    n_rows, n_cols = x.shape
    # TODO: allocate y on the device and launch one TILE × BLOCK_ROWS block per tile of x.
    raise NotImplementedError('TODO: allocate y on the device and launch one TILE × BLOCK_ROWS block per tile of x.')
