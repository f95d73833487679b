"""L25 · FlashAttention forward: the IO ledgers, the tiled algorithm in NumPy, and the Triton kernel.

Lecture 25 (03_CUDA与算子性能优化/25_注意力算子深度优化_TiledAttention_FlashAttention_Triton.md):
standard attention O = softmax(S)·V with S = Q·Kᵀ·scale runs as three kernels that write S and P
(N×N each) to HBM and read them back (§1.1-1.2). FlashAttention never writes them: each program
holds one tile of Q rows, streams K and V through on-chip memory tile by tile, and keeps per row
a running max m, a running denominator l and an unnormalized output acc (§2.3, FA2 §4.2-4.3):

    m_new = max(m, rowmax(S_j))            alpha = e^(m - m_new)          P_j = e^(S_j - m_new)
    l     = l·alpha + rowsum(P_j)          acc   = acc·alpha + P_j·V_j     m = m_new
    O = acc / l        lse = m + ln l      (lse, one fp32 per row, is what the backward pass keeps)

The same (m, l) algebra as L23's online softmax, now with a matrix riding along.

Conventions (see README.md): scale defaults to 1/sqrt(d); causal means query i sees keys j <= i
(q and k have the same length); lse is the natural log of Σ_j e^(scale·q_i·k_j) over the keys the
row sees. Bytes are per (batch, head) and exact.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import triton
import triton.language as tl

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

HEAD_DIMS = (16, 32, 64, 128)
DTYPES = (torch.float16, torch.bfloat16, torch.float32)
LSE_BYTES = 4  # lse is fp32 whatever the input dtype


# ---------------------------------------------------------------------------------------------
# 1. The ledgers (bytes of one (batch, head); multiply by batch·heads for a whole layer)
# ---------------------------------------------------------------------------------------------


def attention_hbm_bytes(n: int, d: int, elem_bytes: int) -> int:
    """Global-memory bytes of standard attention, S and P materialized (three kernels, §1.2).

    Kernel 1 reads Q and K and writes S; kernel 2 reads S and writes P; kernel 3 reads P and V and
    writes O: 4·n²·b + 4·n·d·b. fp16 (b = 2): 8N² + 8Nd; N = 4096, d = 128 → 138,412,032 B.
    """
    # TODO: validate, then add the reads and writes of Q, K, V, S, P and O, one named term each.
    raise NotImplementedError('TODO: validate, then add the reads and writes of Q, K, V, S, P and O, one named term each.')


def flash_attention_hbm_bytes(n: int, d: int, block_m: int, elem_bytes: int) -> int:
    """Global-memory bytes of a FlashAttention-2 forward (Q tiles outer, K/V tiles inner), non-causal.

    Q is read once; every one of the ceil(n / block_m) Q tiles reads all of K and V; O is written
    once, and lse once (fp32, 4 B per row). N = 4096, d = 128, block_m = 128, fp16 → 69,222,400 B.
    """
    # TODO: validate, then add Q once, K and V once per Q tile, O once and lse once, in bytes.
    raise NotImplementedError('TODO: validate, then add Q once, K and V once per Q tile, O once and lse once, in bytes.')


def sram_tile_bytes(block_m: int, block_n: int, d: int, elem_bytes: int) -> int:
    """On-chip bytes of the tiles one program stages: a Q tile and one K and one V tile.

    (block_m·d + 2·block_n·d)·b; the S/P tile and the fp32 accumulator live in registers and are
    left out. d = 128, 64 × 64 tiles, fp16 → 49,152 B (fits A100's 164 KB and H100's 228 KB per SM).
    """
    # TODO: validate, then add the Q tile and the K and V tiles.
    raise NotImplementedError('TODO: validate, then add the Q tile and the K and V tiles.')


# ---------------------------------------------------------------------------------------------
# 2. The algorithm in NumPy (fp64): FlashAttention-2's loops, tile by tile
# ---------------------------------------------------------------------------------------------


def _softmax_scale(d: int, sm_scale: float | None) -> float:
    if sm_scale is None:
        return 1.0 / math.sqrt(d)
    if isinstance(sm_scale, bool) or not isinstance(sm_scale, int | float) or not sm_scale > 0:
        raise ValueError(f"sm_scale must be a positive float or None (1/sqrt(d)), got {sm_scale!r}")
    return float(sm_scale)


def _check_numpy_qkv(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[int, int]:
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, np.ndarray) or x.dtype != np.float64 or x.ndim != 2:
            raise ValueError(f"{name} must be a 2-D float64 numpy array (n × d), got {type(x).__name__} "
                             f"{getattr(x, 'dtype', '')} {getattr(x, 'shape', '')}")
    if not q.shape == k.shape == v.shape or q.shape[0] < 1 or q.shape[1] < 1:
        raise ValueError(f"q, k, v must have the same shape n × d (n, d >= 1), got {q.shape}, {k.shape}, {v.shape}")
    return q.shape


def flash_attention_numpy(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, causal: bool = False,
                          sm_scale: float | None = None, block_r: int = 16,
                          block_c: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Attention of one head, (o, lse), by FlashAttention-2's tiled loops in float64.

    q, k, v: n × d float64 arrays; o: n × d; lse: n. Q is walked in tiles of block_r rows (the
    last may be ragged); for each, K and V in tiles of block_c rows, with the online (m, l, acc)
    update. Graded: equal to naive attention to 1e-10, and no array larger than a few tiles besides
    o and lse (no n × n scores, no block_r × n strip).
    """
    n, d = _check_numpy_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    block_r, block_c = check_int("block_r", block_r, minimum=1), check_int("block_c", block_c, minimum=1)
    # TODO: loop over Q tiles; inside, over K/V tiles (only those at or left of the diagonal when
    #       causal), keeping (m, l, acc) per row; then o = acc / l and lse = m + log(l).
    raise NotImplementedError('TODO: loop over Q tiles; inside, over K/V tiles (only those at or left of the diagonal when causal), keeping (m, l, acc) per row; then o = acc / l and lse = m + log(l).')


# ---------------------------------------------------------------------------------------------
# 3. The Triton kernel
# ---------------------------------------------------------------------------------------------


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[int, int, int, int]:
    """(batch, heads, n, d) of three same-shaped 4-D tensors, or a ValueError saying what is wrong."""
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(f"q, k, v must share one shape (batch, heads, n, d), got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if q.dtype not in DTYPES or k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"q, k, v must all be float16, bfloat16 or float32, got {q.dtype}, {k.dtype}, {v.dtype}")
    batch, heads, n, d = q.shape
    if d not in HEAD_DIMS or min(batch, heads, n) < 1:
        raise ValueError(f"need d in {HEAD_DIMS} and batch, heads, n >= 1, got {tuple(q.shape)}")
    return batch, heads, n, d


def _check_blocks(**blocks: int) -> None:
    for name, value in blocks.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 16 <= value <= 256 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two in [16, 256] (tl.dot's minimum is 16), got {value!r}")


@triton.jit
def _flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, N, H,
                      stride_qb, stride_qh, stride_qm, stride_qd,
                      stride_kb, stride_kh, stride_kn, stride_kd,
                      stride_vb, stride_vh, stride_vn, stride_vd,
                      stride_ob, stride_oh, stride_om, stride_od,
                      stride_lb, stride_lh, stride_lm,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr):
    """One program per (tile of BLOCK_M query rows, batch·head); K and V streamed in BLOCK_N tiles."""
    # Plan: 1. load the Q tile once (rows past N masked)
    #       2. m = -inf, l = 0, acc = 0 (fp32); loop over K/V tiles (causal: only up to the tile's
    #          last row): S = Q·Kᵀ·scale, mask keys past N (and j > i when causal) to -inf, then the
    #          online update of the module docstring; P is cast to V's dtype for the second dot
    #       3. store O = acc / l and lse = m + log(l) once, rows past N masked.
    #       Graded: Q read once, K and V once per Q tile, O and lse written once; no N×N tensor.
    # TODO: write the FlashAttention-2 forward body following the plan.
    raise NotImplementedError('TODO: write the FlashAttention-2 forward body following the plan.')


def flash_attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                        sm_scale: float | None = None, *, block_m: int = 64,
                        block_n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention forward, (o, lse), in one Triton kernel that never writes an N×N tensor.

    q, k, v: (batch, heads, n, d), any strides, fp16/bf16/fp32, d in {16, 32, 64, 128}, n >= 1.
    o: a new (batch, heads, n, d) tensor of q's dtype; lse: (batch, heads, n) fp32, natural log.
    fp32 inputs are multiplied in full fp32 (input_precision="ieee": no TF32). block_m × block_n
    are the Q and K/V tile sizes (powers of two in [16, 256]); the grader reads your block_m to
    hold your traffic against ``flash_attention_hbm_bytes``.
    """
    batch, heads, n, d = _check_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    _check_blocks(block_m=block_m, block_n=block_n)
    # TODO: allocate o and lse, and launch one program per (Q tile, batch·head).
    raise NotImplementedError('TODO: allocate o and lse, and launch one program per (Q tile, batch·head).')
