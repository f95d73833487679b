"""L23 · Online softmax: the (m, d) recurrence, its bytes ledger, and two Triton kernels.

Lecture 23 (03_CUDA与算子性能优化/23_经典算子优化_Reduce与Softmax_OnlineSoftmax_Fused.md) builds
softmax up from its safe form, softmax(x)_i = e^(x_i - m) / Σ_j e^(x_j - m) with m = max_j x_j,
to the *online* form that keeps a running max m and a running denominator d in one pass:

    m_k = max(m_{k-1}, x_k)
    d_k = d_{k-1} · e^(m_{k-1} - m_k) + e^(x_k - m_k)

Two partial states merge associatively: (m_a, d_a) ⊕ (m_b, d_b) = (m, d_a e^(m_a - m) + d_b e^(m_b - m))
with m = max(m_a, m_b). That merge is what warps, blocks and FlashAttention's tiles do.

Bytes moved per row of N elements of b bytes each (the "ledger"): three passes (max, sum,
normalize) read x three times and write y once, 4Nb; online (stats, then normalize) reads twice,
3Nb; fused (the row held on chip) reads once, 2Nb. For fp32: 16N, 12N, 8N.

Conventions: -inf entries contribute e^(-inf) = 0; the empty stream is the identity (-inf, 0.0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
import triton
import triton.language as tl

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

ALGORITHMS = ("three_pass", "online", "fused")
MAX_COLS = 16384  # softmax_fused keeps one row in registers: the contract stops here
State = tuple[float, float]


# ---------------------------------------------------------------------------------------------
# 1. The online state and its merge (plain Python: the algebra before the kernel)
# ---------------------------------------------------------------------------------------------


def online_softmax_state(xs: Iterable[float]) -> State:
    """Running max ``m`` and denominator ``d = Σ e^(x - m)`` of ``xs``, in one streaming pass.

    ``xs`` may be a one-shot iterator: read each value once. [2.0, 4.0, 1.0] → (4.0, 1.185122...).
    The empty stream gives (-inf, 0.0).
    """
    # TODO: stream xs once, updating (m, d) with the recurrence in the module docstring.
    raise NotImplementedError('TODO: stream xs once, updating (m, d) with the recurrence in the module docstring.')


def merge_online_states(a: State, b: State) -> State:
    """Combine the states of two disjoint parts of a stream: ``state(A + B)``.

    Associative and commutative, with identity (-inf, 0.0); never computes e^m itself, so it does
    not overflow for large m.
    """
    # TODO: rescale both denominators to the larger max; mind the identity (-inf, 0.0).
    raise NotImplementedError('TODO: rescale both denominators to the larger max; mind the identity (-inf, 0.0).')


# ---------------------------------------------------------------------------------------------
# 2. The bytes ledger
# ---------------------------------------------------------------------------------------------


def softmax_hbm_bytes(n_rows: int, n_cols: int, elem_bytes: int, algorithm: str) -> int:
    """Bytes a row-wise softmax of an ``n_rows × n_cols`` tensor moves to and from global memory.

    ``algorithm``: "three_pass" reads x three times, "online" twice, "fused" once; each writes y
    once. Exact int bytes. Invalid arguments raise ValueError naming the argument.
    """
    # TODO: validate the arguments, then count reads and writes of x and y in bytes.
    raise NotImplementedError('TODO: validate the arguments, then count reads and writes of x and y in bytes.')


# ---------------------------------------------------------------------------------------------
# 3. Kernels
# ---------------------------------------------------------------------------------------------


def _check_input(x: torch.Tensor, max_cols: int | None = None) -> tuple[int, int]:
    """(n_rows, n_cols) of a 2-D floating tensor, or a ValueError that says what is wrong."""
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D (rows × cols), got shape {tuple(x.shape)}")
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"x must be float32, float16 or bfloat16, got {x.dtype}")
    n_rows, n_cols = x.shape
    if n_rows < 1 or n_cols < 1 or (max_cols is not None and n_cols > max_cols):
        raise ValueError(f"x must have 1 <= n_cols <= {max_cols} and n_rows >= 1, got {tuple(x.shape)}")
    return n_rows, n_cols


@triton.jit
def _softmax_fused_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                          BLOCK_N: tl.constexpr):
    """One program per row; the whole row (BLOCK_N >= n_cols) stays in registers."""
    # Plan: 1. load the row once (masked lanes read -inf so they never win the max and e^-inf = 0)
    #       2. m = max, num = e^(x - m), den = Σ num, all in fp32
    #       3. store num / den once, cast to y's dtype. Graded: read N elements, write N elements.
    # TODO: write the fused kernel body following the plan.
    raise NotImplementedError('TODO: write the fused kernel body following the plan.')


def softmax_fused(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax of a 2-D tensor (fp32/fp16/bf16, 1 <= n_cols <= 16384) in one Triton kernel.

    Same shape and dtype as x; each element of x is read once and each element of y written once.
    """
    n_rows, n_cols = _check_input(x, MAX_COLS)
    # TODO: allocate y, pick BLOCK_N (a power of two >= n_cols) and launch one program per row.
    raise NotImplementedError('TODO: allocate y, pick BLOCK_N (a power of two >= n_cols) and launch one program per row.')


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    """One program per row, walking it in tiles of BLOCK_N columns, any n_cols."""
    # Plan: pass 1 over the tiles keeps an online (m, d) state (one per lane, merged at the end, or
    #       one per tile); pass 2 re-reads each tile and stores e^(x - m) / d.
    #       Graded: read 2N elements, write N elements; no third pass.
    # TODO: write the two passes of the online kernel following the plan.
    raise NotImplementedError('TODO: write the two passes of the online kernel following the plan.')


def softmax_online(x: torch.Tensor, block_n: int = 128) -> torch.Tensor:
    """Row-wise softmax of a 2-D tensor of any width, in tiles of ``block_n`` columns (a power of 2).

    Same shape and dtype as x; one Triton kernel that reads x twice and writes y once.
    """
    n_rows, n_cols = _check_input(x)
    if isinstance(block_n, bool) or not isinstance(block_n, int) or block_n < 1 or block_n & (block_n - 1):
        raise ValueError(f"block_n must be a power of two, got {block_n!r}")
    # TODO: allocate y and launch the online kernel, one program per row, BLOCK_N=block_n.
    raise NotImplementedError('TODO: allocate y and launch the online kernel, one program per row, BLOCK_N=block_n.')
