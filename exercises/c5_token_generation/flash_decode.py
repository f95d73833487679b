"""C5 · Flash-Decoding over a paged KV cache: split the context, attend per split, merge by log-sum-exp.

At decode each sequence brings ONE query token per head, and its keys and values sit in a paged
cache (L33, C2): token i of a sequence lives in physical block ``block_table[b, i // B]`` at offset
``i % B``. One program per (sequence, kv head) would give a GPU only batch · kv heads programs, far
fewer than its SMs at batch 1; Flash-Decoding cuts each sequence's context into ``num_splits`` parts,
runs one program per (sequence, kv head, split), and merges the partial results afterwards.

Stage 1, per (b, kv head g, split s): the query heads of g's group (GQA: query head h reads kv head
h // (n_heads / n_kv_heads)) attend over the split's tokens only, with the online softmax:

    o_s = Σ_{j ∈ s} e^{x_j − lse_s} · v_j,      lse_s = ln Σ_{j ∈ s} e^{x_j},      x_j = scale · q·k_j

An empty split has lse_s = −∞ and o_s = 0. Each K/V block is read by one program only, and that
program uses it for every query head of the group.

Stage 2 (``merge_splits``), per (b, h): with M = max_s lse_s and w_s = e^{lse_s − M},

    o = Σ_s w_s · o_s / Σ_s w_s,      lse = M + ln Σ_s w_s

Worked example (one head, d = 1, keys scoring x = [0, ln 3] with values [1, 5], two splits of one
token): split 0 gives (o 1, lse 0), split 1 gives (o 5, lse ln 3); the merge weighs them 1 : 3, so
o = (1 + 15) / 4 = 4, which is softmax([0, ln 3]) · [1, 5] = 0.25 · 1 + 0.75 · 5.

Conventions: partials are float32, lse in natural log; the output has q's dtype. Shapes:
q [batch, n_heads, d]; k_cache, v_cache [num_blocks, B, n_kv_heads, d] (one dtype, any float dtype,
q's may differ); block_table int32/int64 [batch, max_blocks]; context_lens int32/int64 [batch],
1 ≤ context_lens[b] ≤ max_blocks · B. Table entries past a sequence's last block are never read.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INT_DTYPES = (torch.int32, torch.int64)


def _check_decode_args(q, k_cache, v_cache, block_table, context_lens, num_splits) -> tuple[int, ...]:
    """Given: shapes and dtypes (values stay on the device: they are the kernel's to read)."""
    for name, t in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache), ("block_table", block_table),
                    ("context_lens", context_lens)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a tensor, got {type(t).__name__}")
    if q.dim() != 3 or q.dtype not in FLOAT_DTYPES:
        raise ValueError(f"q must be a float tensor [batch, n_heads, d], got {tuple(q.shape)} {q.dtype}")
    if k_cache.dim() != 4 or k_cache.dtype not in FLOAT_DTYPES:
        raise ValueError(f"k_cache must be a float tensor [num_blocks, B, n_kv_heads, d], got "
                         f"{tuple(k_cache.shape)} {k_cache.dtype}")
    if v_cache.shape != k_cache.shape or v_cache.dtype != k_cache.dtype:
        raise ValueError(f"v_cache must match k_cache's shape and dtype, got {tuple(v_cache.shape)} {v_cache.dtype}")
    batch, n_heads, d = q.shape
    _, block_size, n_kv, d_kv = k_cache.shape
    if d_kv != d:
        raise ValueError(f"k_cache's head dim {d_kv} differs from q's {d}")
    if n_kv < 1 or n_heads % n_kv:
        raise ValueError(f"q's n_heads {n_heads} must be a multiple of k_cache's n_kv_heads {n_kv}")
    if block_table.dim() != 2 or block_table.shape[0] != batch or block_table.dtype not in INT_DTYPES:
        raise ValueError(f"block_table must be an int32/int64 tensor [batch={batch}, max_blocks], got "
                         f"{tuple(block_table.shape)} {block_table.dtype}")
    if tuple(context_lens.shape) != (batch,) or context_lens.dtype not in INT_DTYPES:
        raise ValueError(f"context_lens must be an int32/int64 tensor [batch={batch}], got "
                         f"{tuple(context_lens.shape)} {context_lens.dtype}")
    splits = check_int("num_splits", num_splits, 1)
    return batch, n_heads, d, block_size, n_kv, splits


@triton.jit
def _split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, o_ptr, lse_ptr, scale, num_splits, group, head_dim,
                  block_size,
                  stride_qb, stride_qh, stride_qd,
                  stride_kn, stride_kb, stride_kh, stride_kd,
                  stride_vn, stride_vb, stride_vh, stride_vd,
                  stride_tb, stride_tn,
                  stride_ob, stride_oh, stride_os, stride_od,
                  stride_lb, stride_lh, stride_ls,
                  BLOCK_T: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr):
    """One (sequence, kv head, split): the group's query heads over the split's whole blocks."""
    b, kvh, s = tl.program_id(0).to(tl.int64), tl.program_id(1).to(tl.int64), tl.program_id(2)
    ctx = tl.load(lens_ptr + b)
    n_blocks = (ctx + block_size - 1) // block_size
    per_split = (n_blocks + num_splits - 1) // num_splits
    first = s * per_split
    last = tl.minimum(first + per_split, n_blocks)
    offs_g = tl.arange(0, BLOCK_G)
    offs_t = tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    g_ok, d_ok = offs_g < group, offs_d < head_dim
    heads = kvh * group + offs_g
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
    m_i = tl.full([BLOCK_G], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    k_base = k_ptr + kvh * stride_kh + offs_t[:, None] * stride_kb + offs_d[None, :] * stride_kd
    v_base = v_ptr + kvh * stride_vh + offs_t[:, None] * stride_vb + offs_d[None, :] * stride_vd
    for blk in range(first, last):
        phys = tl.load(table_ptr + b * stride_tb + blk * stride_tn).to(tl.int64)
        tok_ok = (offs_t < block_size) & (blk * block_size + offs_t < ctx)
        kv_ok = tok_ok[:, None] & d_ok[None, :]
        k = tl.load(k_base + phys * stride_kn, mask=kv_ok, other=0.0).to(tl.float32)
        x = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale  # [BLOCK_G, BLOCK_SIZE]
        x = tl.where(tok_ok[None, :], x, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(x, axis=1))  # finite: every visited block holds a token
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(x - m_new[:, None])
        v = tl.load(v_base + phys * stride_vn, mask=kv_ok, other=0.0).to(tl.float32)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m_i = m_new
    empty = l_i == 0.0
    lse = tl.where(empty, -float("inf"), m_i + tl.log(tl.where(empty, 1.0, l_i)))
    o = acc / tl.where(empty, 1.0, l_i)[:, None]
    tl.store(o_ptr + b * stride_ob + heads[:, None] * stride_oh + s * stride_os + offs_d[None, :] * stride_od, o,
             mask=g_ok[:, None] & d_ok[None, :])
    tl.store(lse_ptr + b * stride_lb + heads * stride_lh + s * stride_ls, lse, mask=g_ok)


@triton.jit
def _merge_kernel(o_part_ptr, lse_part_ptr, o_ptr, n_heads, num_splits, head_dim,
                  stride_pb, stride_ph, stride_ps, stride_pd,
                  stride_lb, stride_lh, stride_ls,
                  stride_ob, stride_oh, stride_od,
                  BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    """One (sequence, head): every split's (o_s, lse_s) loaded once, weighed by e^(lse_s − max)."""
    row = tl.program_id(0)
    b, h = (row // n_heads).to(tl.int64), (row % n_heads).to(tl.int64)
    offs_s, offs_d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    s_ok, d_ok = offs_s < num_splits, offs_d < head_dim
    lse = tl.load(lse_part_ptr + b * stride_lb + h * stride_lh + offs_s * stride_ls, mask=s_ok,
                  other=-float("inf"))
    o_s = tl.load(o_part_ptr + b * stride_pb + h * stride_ph + offs_s[:, None] * stride_ps
                  + offs_d[None, :] * stride_pd, mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    m = tl.max(lse, axis=0)
    w = tl.where(lse == -float("inf"), 0.0, tl.exp(lse - m))
    o = tl.sum(w[:, None] * o_s, axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d * stride_od, o.to(o_ptr.dtype.element_ty), mask=d_ok)


def merge_splits(o_part: torch.Tensor, lse_part: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Merge per-split attention results: o [batch, n_heads, d] in ``dtype``.

    o_part: float32 [batch, n_heads, num_splits, d], each split's softmax-normalised output;
    lse_part: float32 [batch, n_heads, num_splits], each split's ln Σ e^x (−∞ for an empty split).
    o = Σ_s e^(lse_s − M) · o_s / Σ_s e^(lse_s − M), M = max_s lse_s; every row has at least one
    finite lse. Reads each split's partials once, writes o once.
    Worked: o_part [[1], [5]], lse_part [0, ln 3] (one head, d = 1) → o = [4].
    Errors: ValueError naming o_part / lse_part for wrong shapes or dtypes.
    """
    if not isinstance(o_part, torch.Tensor) or o_part.dim() != 4 or o_part.dtype != torch.float32:
        raise ValueError("o_part must be a float32 tensor [batch, n_heads, num_splits, d]")
    if not isinstance(lse_part, torch.Tensor) or tuple(lse_part.shape) != tuple(o_part.shape[:3]) \
            or lse_part.dtype != torch.float32:
        raise ValueError(f"lse_part must be a float32 tensor {tuple(o_part.shape[:3])} (o_part's first three dims)")
    # TODO: one program per (sequence, head): load its splits' lse and o once, weigh by e^(lse − max), store o.
    raise NotImplementedError("TODO: one program per (sequence, head): load its splits' lse and o once, weigh by e^(lse − max), store o.")


def flash_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                 context_lens: torch.Tensor, num_splits: int = 4, *, sm_scale: float | None = None) -> torch.Tensor:
    """Decode attention of one query token per sequence over a paged KV cache: o [batch, n_heads, d].

    o[b, h] = softmax_j(scale · q[b, h] · k_j) · v_j over the sequence's tokens j < context_lens[b],
    token j at k_cache[block_table[b, j // B], j % B, h // (n_heads / n_kv_heads)]; scale = sm_scale or
    1/√d. Splits the context into ``num_splits`` parts (how is yours to choose: whole blocks or token
    ranges), one program per (sequence, kv head, split), each K/V element read once; then merges the
    float32 partials by log-sum-exp (``merge_splits`` or a merge of your own). Output in q's dtype.
    Errors: ValueError naming the argument for wrong shapes or dtypes, num_splits < 1.
    """
    batch, n_heads, d, block_size, n_kv, splits = _check_decode_args(q, k_cache, v_cache, block_table, context_lens,
                                                                     num_splits)
    scale = float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)
    # TODO: stage 1 on a (batch, n_kv_heads, num_splits) grid writing float32 partials, then the merge.
    raise NotImplementedError('TODO: stage 1 on a (batch, n_kv_heads, num_splits) grid writing float32 partials, then the merge.')
