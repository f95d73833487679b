"""Reference Flash-Decoding over a paged KV cache in Triton: the oracle's twin and the gpu_perf bar for C5.

Stage 1 runs one program per (sequence, kv head, split). A split is a range of whole TILES of BLOCK_N tokens
(several pages of the cache at once, each token's page looked up in the block table), so one load covers
BLOCK_N tokens whatever the page size. The query heads of the GQA group are padded to 16 rows so that both
products use tensor cores (tl.dot); the softmax runs in base 2 with the scale folded into log2(e). Each program
writes o_s (normalized, fp32) and lse_s (natural log; −inf for an empty split). Stage 2 merges the splits of
one (sequence, head) by log-sum-exp, reading each split once.

On a GPU the tile and warps are autotuned per (page size, d, group) from configs that suit Hopper; under the
interpreter (no GPU) one small config runs. The split count is the caller's (FlashDecoding's rule: the fewest
splits that give every SM a CTA).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
CPU_CONFIG = dict(BLOCK_N=16)
GPU_CONFIGS = [triton.Config(dict(BLOCK_N=n), num_warps=w, num_stages=s)
               for n, w, s in [(64, 4, 2), (128, 4, 2), (64, 4, 3), (128, 8, 2), (32, 4, 3)]]


@triton.jit
def _decode_split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, o_ptr, lse_ptr, qk_scale, num_splits, group,
                         page,
                         stride_qb, stride_qh, stride_qd,
                         stride_kn, stride_kb, stride_kh, stride_kd,
                         stride_vn, stride_vb, stride_vh, stride_vd,
                         stride_tb, stride_tn,
                         stride_ob, stride_oh, stride_os, stride_od,
                         stride_lb, stride_lh, stride_ls,
                         HEAD_DIM: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr,
                         DOT_PRECISION: tl.constexpr):
    b, kvh, s = tl.program_id(0).to(tl.int64), tl.program_id(1).to(tl.int64), tl.program_id(2)
    ctx = tl.load(lens_ptr + b)
    n_tiles = (ctx + BLOCK_N - 1) // BLOCK_N
    per_split = (n_tiles + num_splits - 1) // num_splits
    first = s * per_split
    last = tl.minimum(first + per_split, n_tiles)
    offs_g = tl.arange(0, BLOCK_G)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    g_ok = offs_g < group
    heads = kvh * group + offs_g
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=g_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_G], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, HEAD_DIM], tl.float32)
    k_base = k_ptr + kvh * stride_kh + offs_d[None, :] * stride_kd
    v_base = v_ptr + kvh * stride_vh + offs_d[None, :] * stride_vd
    for tile in range(first, last):
        tok = tile * BLOCK_N + offs_n
        tok_ok = tok < ctx
        phys = tl.load(table_ptr + b * stride_tb + (tok // page) * stride_tn, mask=tok_ok, other=0).to(tl.int64)
        row_k = phys * stride_kn + (tok % page) * stride_kb
        row_v = phys * stride_vn + (tok % page) * stride_vb
        k = tl.load(k_base + row_k[:, None], mask=tok_ok[:, None], other=0.0)
        v = tl.load(v_base + row_v[:, None], mask=tok_ok[:, None], other=0.0)
        x = tl.dot(q.to(k.dtype), tl.trans(k), input_precision=DOT_PRECISION) * qk_scale  # log2 units
        x = tl.where(tok_ok[None, :], x, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(x, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(x - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_new
    empty = l_i == 0.0
    lse = tl.where(empty, -float("inf"), (m_i + tl.log2(tl.where(empty, 1.0, l_i))) / 1.4426950408889634)
    o = acc / tl.where(empty, 1.0, l_i)[:, None]
    tl.store(o_ptr + b * stride_ob + heads[:, None] * stride_oh + s * stride_os + offs_d[None, :] * stride_od, o,
             mask=g_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + heads * stride_lh + s * stride_ls, lse, mask=g_ok)


@triton.jit
def _decode_merge_kernel(o_part_ptr, lse_part_ptr, o_ptr, n_heads, num_splits,
                         stride_pb, stride_ph, stride_ps, stride_pd, stride_lb, stride_lh, stride_ls,
                         stride_ob, stride_oh, stride_od, HEAD_DIM: tl.constexpr, BLOCK_S: tl.constexpr):
    row = tl.program_id(0)
    b, h = (row // n_heads).to(tl.int64), (row % n_heads).to(tl.int64)
    offs_s, offs_d = tl.arange(0, BLOCK_S), tl.arange(0, HEAD_DIM)
    s_ok = offs_s < num_splits
    lse = tl.load(lse_part_ptr + b * stride_lb + h * stride_lh + offs_s * stride_ls, mask=s_ok, other=-float("inf"))
    o_s = tl.load(o_part_ptr + b * stride_pb + h * stride_ph + offs_s[:, None] * stride_ps
                  + offs_d[None, :] * stride_pd, mask=s_ok[:, None], other=0.0)
    m = tl.max(lse, axis=0)
    w = tl.where(lse == -float("inf"), 0.0, tl.exp(lse - m))
    o = tl.sum(w[:, None] * o_s, axis=0) / tl.sum(w, axis=0)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_d * stride_od, o.to(o_ptr.dtype.element_ty))


_decode_split_autotuned = triton.autotune(configs=GPU_CONFIGS, key=["page", "HEAD_DIM", "BLOCK_G"])(
    _decode_split_kernel)


def flash_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                 context_lens: torch.Tensor, num_splits: int = 4, *, sm_scale: float | None = None) -> torch.Tensor:
    """o [batch, n_heads, d] in q's dtype: softmax(q·kᵀ·scale)·v over each sequence's paged context (GQA)."""
    batch, n_heads, d = q.shape
    _, page, n_kv, _ = k_cache.shape
    if d not in (16, 32, 64, 128, 256) or n_heads % n_kv or k_cache.shape != v_cache.shape:
        raise ValueError(f"need d a power of two in 16..256 and n_heads a multiple of n_kv_heads, got q "
                         f"{tuple(q.shape)}, k_cache {tuple(k_cache.shape)}")
    group = n_heads // n_kv
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(d)
    o_part = torch.empty((batch, n_heads, num_splits, d), dtype=torch.float32, device=q.device)
    lse_part = torch.empty((batch, n_heads, num_splits), dtype=torch.float32, device=q.device)
    args = (q, k_cache, v_cache, block_table, context_lens, o_part, lse_part, scale * LOG2E, num_splits, group, page,
            *q.stride(), *k_cache.stride(), *v_cache.stride(), *block_table.stride(), *o_part.stride(),
            *lse_part.stride())
    consts = dict(HEAD_DIM=d, BLOCK_G=max(16, triton.next_power_of_2(group)),
                  DOT_PRECISION="ieee" if k_cache.dtype in (torch.float32, torch.float64) else "tf32")
    if q.device.type == "cuda":
        _decode_split_autotuned[(batch, n_kv, num_splits)](*args, **consts)
    else:
        _decode_split_kernel[(batch, n_kv, num_splits)](*args, **consts, **CPU_CONFIG)
    o = torch.empty((batch, n_heads, d), dtype=q.dtype, device=q.device)
    _decode_merge_kernel[(batch * n_heads,)](o_part, lse_part, o, n_heads, num_splits, *o_part.stride(),
                                             *lse_part.stride(), *o.stride(), HEAD_DIM=d,
                                             BLOCK_S=triton.next_power_of_2(num_splits))
    return o


# ---- what this is the reference of: plain data read by make bench and the tests (grader/tools/bench.py) ------


def _bench_inputs(device: str) -> tuple[torch.Tensor, ...]:
    """(k_cache, v_cache, q, block_table, context_lens): batch 8, 8 kv heads × 4, d 128, 4096 tokens, pages of 16."""
    batch, n_kv, group, ctx, d = (8, 8, 4, 4096, 128) if device == "cuda" else (1, 2, 2, 40, 16)
    page, n_pages = 16, -(-ctx // 16)
    g = torch.Generator(device).manual_seed(0)
    k_cache = torch.randn(batch * n_pages, page, n_kv, d, device=device, generator=g).to(torch.float16)
    v_cache = torch.randn(batch * n_pages, page, n_kv, d, device=device, generator=g).to(torch.float16)
    q = torch.randn(batch, n_kv * group, d, device=device, generator=g).to(torch.float16)
    table = torch.randperm(batch * n_pages, generator=torch.Generator().manual_seed(1)).to(torch.int32)
    return k_cache, v_cache, q, table.view(batch, n_pages).to(device), torch.full((batch,), ctx, dtype=torch.int32,
                                                                                   device=device)


def _splits(q: torch.Tensor, k_cache: torch.Tensor) -> int:
    sms = torch.cuda.get_device_properties(0).multi_processor_count if q.is_cuda else 8
    return max(1, -(-sms // (q.shape[0] * k_cache.shape[2])))


def _bench_run(k_cache, v_cache, q, table, lens):
    return flash_decode(q, k_cache, v_cache, table, lens, _splits(q, k_cache))


def _bench_oracle(k_cache, v_cache, q, table, lens):
    """Dense SDPA over the gathered contexts (every sequence has the same length here)."""
    page, n_kv, d = k_cache.shape[1:]
    ctx = int(lens[0])
    pos = torch.arange(ctx, device=q.device)
    slots = table.long()[:, pos // page] * page + pos % page  # [batch, ctx]
    k = k_cache.reshape(-1, n_kv, d)[slots].permute(0, 2, 1, 3).float()
    v = v_cache.reshape(-1, n_kv, d)[slots].permute(0, 2, 1, 3).float()
    group = q.shape[1] // n_kv
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return F.scaled_dot_product_attention(q.float()[:, :, None, :], k, v)[:, :, 0].to(q.dtype)


REFERENCE = dict(
    unit="c5_token_generation", exercises=("flash_decode",), vendor="sdpa_dense",
    bench=(dict(name="flash_decode", inputs=_bench_inputs, run=_bench_run, oracle=_bench_oracle, baseline="copy",
                goal=0.7, rtol=2e-2, atol=2e-2),),
)
