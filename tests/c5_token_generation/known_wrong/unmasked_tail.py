"""Classic bug: the last block's slots past the context are used (only the block size is masked, not context_lens)."""

MODULE = "flash_decode"
REJECTED_BY = {'flash_decode': ['correctness', 'efficiency']}


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
        tok_ok = offs_t < block_size
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


def flash_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor,
                 context_lens: torch.Tensor, num_splits: int = 4, *, sm_scale: float | None = None) -> torch.Tensor:
    batch, n_heads, d, block_size, n_kv, splits = _check_decode_args(q, k_cache, v_cache, block_table, context_lens,
                                                                     num_splits)
    scale = float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)
    group = n_heads // n_kv
    o_part = torch.empty((batch, n_heads, splits, d), dtype=torch.float32, device=q.device)
    lse_part = torch.empty((batch, n_heads, splits), dtype=torch.float32, device=q.device)
    _split_kernel[(batch, n_kv, splits)](
        q, k_cache, v_cache, block_table, context_lens, o_part, lse_part, scale, splits, group, d, block_size,
        *q.stride(), *k_cache.stride(), *v_cache.stride(), *block_table.stride(), *o_part.stride(),
        *lse_part.stride(), BLOCK_T=triton.next_power_of_2(block_size), BLOCK_G=triton.next_power_of_2(group),
        BLOCK_D=triton.next_power_of_2(d))
    return merge_splits(o_part, lse_part, q.dtype)
