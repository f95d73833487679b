"""L24 · GEMM: the block-tiling ledger, and a tiled Triton matmul that moves exactly what it says.

Lecture 24 (03_CUDA与算子性能优化/24_矩阵乘法核心_GEMM优化与TensorCore思维.md) computes C = A·B
(A is m×k, B is k×n) as a grid of BLOCK_M × BLOCK_N output tiles. Each tile walks k in steps of
BLOCK_K, loading a BLOCK_M × BLOCK_K slice of A and a BLOCK_K × BLOCK_N slice of B, and does
2·BLOCK_M·BLOCK_N·BLOCK_K FLOPs with them (§2.4):

    tile intensity = 2·BM·BN·BK / (b·BK·(BM + BN)) = 2·BM·BN / (b·(BM + BN))   FLOP per byte loaded

with b bytes per element: 128×128 in fp32 gives 32.0 FLOP/B, against 0.25 for the naive kernel. The
same formula one level down (a thread's TM × TN register tile fed from shared memory) gives 2.0 for
8×8 (§3.4).

Over the whole product, each row-strip of A is loaded once per column of tiles and each
column-strip of B once per row of tiles; C is written once (the ledger of part 1).

Conventions: element counts are exact (a masked-off lane moves nothing), so a ragged last tile
counts only its real rows and columns: the re-read factors are ceil(n / BN) and ceil(m / BM).
Inputs are fp16 or bf16; products accumulate in fp32; C has the inputs' dtype (rounded once, at
the store). TF32 plays no part: there is no fp32 input.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

DTYPES = (torch.float16, torch.bfloat16)


# ---------------------------------------------------------------------------------------------
# 1. The ledgers
# ---------------------------------------------------------------------------------------------


def tile_intensity(block_m: int, block_n: int, elem_bytes: int) -> float:
    """FLOPs per byte of global memory loaded by one BLOCK_M × BLOCK_N tile, per step of k.

    2·BM·BN / (elem_bytes·(BM + BN)), independent of BLOCK_K. 128×128 fp32 → 32.0; 128×128 fp16 →
    64.0. Arguments are positive ints; anything else raises ValueError naming the argument.
    """
    # TODO: validate the arguments, then divide one k-step's FLOPs by the bytes it loads.
    ### BEGIN SOLUTION
    bm, bn = check_int("block_m", block_m, minimum=1), check_int("block_n", block_n, minimum=1)
    b = check_int("elem_bytes", elem_bytes, minimum=1)
    flops_per_k = 2 * bm * bn  # one multiply and one add per output element, per k
    bytes_per_k = b * (bm + bn)  # a column of the A tile and a row of the B tile
    return flops_per_k / bytes_per_k
    ### END SOLUTION


def tiled_gemm_hbm_bytes(m: int, n: int, k: int, block_m: int, block_n: int, elem_bytes: int) -> int:
    """Bytes a BLOCK_M × BLOCK_N tiled GEMM (m×k times k×n) loads and stores in global memory.

    A (m·k elements) is loaded once per column of tiles, ceil(n / block_n) times; B (k·n) once per
    row of tiles, ceil(m / block_m) times; C (m·n) is stored once. Exact int bytes; every element
    is ``elem_bytes`` wide. Arguments are positive ints, else ValueError naming the argument.
    """
    # TODO: validate, then add A's re-reads, B's re-reads and C's one write, in bytes.
    ### BEGIN SOLUTION
    m, n, k = check_int("m", m, minimum=1), check_int("n", n, minimum=1), check_int("k", k, minimum=1)
    bm, bn = check_int("block_m", block_m, minimum=1), check_int("block_n", block_n, minimum=1)
    b = check_int("elem_bytes", elem_bytes, minimum=1)
    a_loads = m * k * math.ceil(n / bn)  # every column of tiles reads its whole row-strip of A
    b_loads = k * n * math.ceil(m / bm)  # every row of tiles reads its whole column-strip of B
    c_stores = m * n  # each output element written once, never read
    return b * (a_loads + b_loads + c_stores)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The kernel
# ---------------------------------------------------------------------------------------------


def _check_operands(a: torch.Tensor, b: torch.Tensor) -> tuple[int, int, int]:
    """(m, n, k) of two 2-D fp16/bf16 matrices that can be multiplied, or a ValueError saying why."""
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype not in DTYPES or b.dtype != a.dtype:
        raise ValueError(f"a and b must both be float16 or both bfloat16, got {a.dtype} and {b.dtype}")
    (m, k), (k_b, n) = a.shape, b.shape
    if k != k_b or min(m, n, k) < 1:
        raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}: need m×k times k×n, all >= 1")
    return m, n, k


def _check_blocks(**blocks: int) -> None:
    for name, value in blocks.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 16 <= value <= 256 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two in [16, 256] (tl.dot's minimum is 16), got {value!r}")


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One program per BLOCK_M × BLOCK_N tile of C, walking k in steps of BLOCK_K."""
    # Plan: 1. offs_m, offs_n: the rows and columns of C this program owns (pid_m, pid_n)
    #       2. acc = zeros in fp32; for each k-step load the A and B slices, masked on m, n AND k
    #          (the last step may be ragged), and acc = tl.dot(a, b, acc)
    #       3. store acc once, cast to C's dtype, masked on m and n.
    #       Graded: each A and B element loaded once per tile that needs it, C stored once.
    # TODO: write the tiled kernel body following the plan.
    ### BEGIN SOLUTION
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_rows = a_ptr + offs_m[:, None].to(tl.int64) * stride_am
    b_cols = b_ptr + offs_n[None, :].to(tl.int64) * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        # read BLOCK_M·BLOCK_K of A and BLOCK_K·BLOCK_N of B; masked lanes (tails) read 0 and move nothing
        a = tl.load(a_rows + ks[None, :] * stride_ak, mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_cols + ks[:, None] * stride_bk, mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # fp16/bf16 products, fp32 accumulate
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    ### END SOLUTION


def matmul(a: torch.Tensor, b: torch.Tensor, *, block_m: int = 128, block_n: int = 128,
           block_k: int = 64) -> torch.Tensor:
    """C = A·B for fp16 or bf16 matrices of any shape and strides, in one Triton kernel.

    a is m×k, b is k×n (m, n, k >= 1, not necessarily multiples of the blocks); C is a new m×n
    tensor of a's dtype, accumulated in fp32. Tiles are block_m × block_n, k-steps block_k
    (powers of two in [16, 256]); the grader reads your defaults and checks the counted traffic
    against ``tiled_gemm_hbm_bytes`` for them, so choose them freely but keep them honest.
    """
    m, n, k = _check_operands(a, b)
    _check_blocks(block_m=block_m, block_n=block_n, block_k=block_k)
    # TODO: allocate C (m×n, a's dtype) and launch one program per output tile.
    ### BEGIN SOLUTION
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _matmul_kernel[grid](
        a, b, c, m, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3,  # GPU only; the interpreter ignores them
    )
    return c
    ### END SOLUTION
