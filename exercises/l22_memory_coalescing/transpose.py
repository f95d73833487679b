"""L22 · A tiled 2-D transpose in Triton: each element read once, written once, both coalesced.

Transposing is the lecture's "two-headed snake" (§4.5): read x by rows and the writes to y stride
by a whole row; write y by rows and the reads stride instead. A tiled kernel moves a
BLOCK_M × BLOCK_N tile: it loads the tile along x's rows, transposes it on chip, and stores it
along y's rows, so every global access is contiguous and each element crosses HBM exactly twice
(read once, written once): 2 · M · N · elem_bytes bytes, the bandwidth floor of a copy.

Reference in plain PyTorch: ``x.t().contiguous()``; the exercise is to write it as one kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32)


def _check_input(x: torch.Tensor) -> tuple[int, int]:
    """(n_rows, n_cols) of a 2-D tensor of a supported dtype, or a ValueError that says what is wrong."""
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    if x.dtype not in DTYPES:
        raise ValueError(f"x must be one of {DTYPES}, got {x.dtype}")
    return x.shape[0], x.shape[1]


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Program (pid_m, pid_n) moves the tile x[pid_m·BM : +BM, pid_n·BN : +BN] to y's transposed tile."""
    # Plan: 1. offs_m, offs_n of this tile; mask both tails (rows and columns)
    #       2. load the BLOCK_M × BLOCK_N tile of x once
    #       3. store its transpose at y[offs_n, offs_m] (y has n_cols rows), same mask transposed.
    #       Graded: read M·N elements, write M·N elements, one launch.
    # TODO: write the tile load and the transposed store following the plan.
    raise NotImplementedError('TODO: write the tile load and the transposed store following the plan.')


def transpose(x: torch.Tensor, block_m: int = 32, block_n: int = 32) -> torch.Tensor:
    """``x.t()`` as a new contiguous tensor, in one Triton kernel.

    x: 2-D (any strides), float32/float16/bfloat16/int32. Returns a contiguous
    ``n_cols × n_rows`` tensor of x's dtype; each element of x is read once and written once.
    block_m, block_n: the tile (powers of two).
    """
    n_rows, n_cols = _check_input(x)
    for name, b in (("block_m", block_m), ("block_n", block_n)):
        if isinstance(b, bool) or not isinstance(b, int) or b < 1 or b & (b - 1):
            raise ValueError(f"{name} must be a power of two, got {b!r}")
    # TODO: allocate y (n_cols × n_rows, contiguous) and launch one program per tile.
    raise NotImplementedError('TODO: allocate y (n_cols × n_rows, contiguous) and launch one program per tile.')
