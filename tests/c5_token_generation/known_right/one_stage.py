"""Correct alternative: ONE kernel, one program per (sequence, kv head) that walks the num_splits splits in turn,
keeping each split's (m, l, acc) and folding it into the running result by log-sum-exp as it ends: no partials are
written, so no merge launch (one launch, K/V read once, o stored once)."""

MODULE = "flash_decode"
ACCEPTED = ["flash_decode"]


@triton.jit
def _one_stage_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, o_ptr, scale, num_splits, group, head_dim,
                      block_size, stride_qb, stride_qh, stride_qd, stride_kn, stride_kb, stride_kh, stride_kd,
                      stride_vn, stride_vb, stride_vh, stride_vd, stride_tb, stride_tn, stride_ob, stride_oh,
                      stride_od, BLOCK_T: tl.constexpr, BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr):
    b, kvh = tl.program_id(0).to(tl.int64), tl.program_id(1).to(tl.int64)
    ctx = tl.load(lens_ptr + b)
    n_blocks = (ctx + block_size - 1) // block_size
    per_split = (n_blocks + num_splits - 1) // num_splits
    offs_g, offs_t, offs_d = tl.arange(0, BLOCK_G), tl.arange(0, BLOCK_T), tl.arange(0, BLOCK_D)
    g_ok, d_ok = offs_g < group, offs_d < head_dim
    heads = kvh * group + offs_g
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=g_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
    lse_all = tl.full([BLOCK_G], -float("inf"), tl.float32)
    o_all = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
    for s in range(0, num_splits):
        m_i = tl.full([BLOCK_G], -float("inf"), tl.float32)
        l_i = tl.zeros([BLOCK_G], tl.float32)
        acc = tl.zeros([BLOCK_G, BLOCK_D], tl.float32)
        for blk in range(s * per_split, tl.minimum(s * per_split + per_split, n_blocks)):
            phys = tl.load(table_ptr + b * stride_tb + blk * stride_tn).to(tl.int64)
            tok_ok = (offs_t < block_size) & (blk * block_size + offs_t < ctx)
            kv_ok = tok_ok[:, None] & d_ok[None, :]
            k = tl.load(k_ptr + phys * stride_kn + offs_t[:, None] * stride_kb + kvh * stride_kh
                        + offs_d[None, :] * stride_kd, mask=kv_ok, other=0.0).to(tl.float32)
            v = tl.load(v_ptr + phys * stride_vn + offs_t[:, None] * stride_vb + kvh * stride_vh
                        + offs_d[None, :] * stride_vd, mask=kv_ok, other=0.0).to(tl.float32)
            x = tl.where(tok_ok[None, :], tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale, -float("inf"))
            m_new = tl.maximum(m_i, tl.max(x, axis=1))
            alpha = tl.exp(m_i - m_new)
            p = tl.exp(x - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
            m_i = m_new
        # fold this split's (lse_s, o_s) into the running result, in registers
        has = l_i > 0.0
        lse_s = tl.where(has, m_i + tl.log(tl.where(has, l_i, 1.0)), -float("inf"))
        o_s = acc / tl.where(has, l_i, 1.0)[:, None]
        top = tl.maximum(lse_all, lse_s)
        top_safe = tl.where(top == -float("inf"), 0.0, top)
        w_old = tl.exp(lse_all - top_safe)
        w_new = tl.exp(lse_s - top_safe)
        total = w_old + w_new
        o_all = (o_all * w_old[:, None] + o_s * w_new[:, None]) / tl.where(total > 0.0, total, 1.0)[:, None]
        lse_all = tl.where(total > 0.0, top_safe + tl.log(tl.where(total > 0.0, total, 1.0)), -float("inf"))
    tl.store(o_ptr + b * stride_ob + heads[:, None] * stride_oh + offs_d[None, :] * stride_od,
             o_all.to(o_ptr.dtype.element_ty), mask=g_ok[:, None] & d_ok[None, :])


def flash_decode(q, k_cache, v_cache, block_table, context_lens, num_splits=4, *, sm_scale=None):
    batch, n_heads, d, block_size, n_kv, splits = _check_decode_args(q, k_cache, v_cache, block_table, context_lens,
                                                                     num_splits)
    scale = float(sm_scale) if sm_scale is not None else 1.0 / math.sqrt(d)
    group = n_heads // n_kv
    o = torch.empty((batch, n_heads, d), dtype=q.dtype, device=q.device)
    _one_stage_kernel[(batch, n_kv)](
        q, k_cache, v_cache, block_table, context_lens, o, scale, splits, group, d, block_size, *q.stride(),
        *k_cache.stride(), *v_cache.stride(), *block_table.stride(), *o.stride(),
        BLOCK_T=triton.next_power_of_2(block_size), BLOCK_G=triton.next_power_of_2(group),
        BLOCK_D=triton.next_power_of_2(d))
    return o
