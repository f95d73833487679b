"""Correct alternative: a 1-D grid whose programs are grouped by head (all Q tiles of one batch·head adjacent, so
that head's K and V stay in L2) and, under a causal mask, walked longest-first (the last Q tile sees the most keys:
starting it first balances the tail of the launch, as FlashAttention-2 schedules it). Another program order, the same
loads per program: full marks."""

MODULE = "attention"
ACCEPTED = ["flash_attention_fwd"]


@triton.jit
def _flash_fwd_grouped(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, N, H,
                       stride_qb, stride_qh, stride_qm, stride_qd,
                       stride_kb, stride_kh, stride_kn, stride_kd,
                       stride_vb, stride_vh, stride_vn, stride_vd,
                       stride_ob, stride_oh, stride_om, stride_od,
                       stride_lb, stride_lh, stride_lm,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(N, BLOCK_M)
    pid_bh = pid // num_m
    pid_m = pid % num_m
    if CAUSAL:
        pid_m = num_m - 1 - pid_m  # longest rows first
    b, h = (pid_bh // H).to(tl.int64), (pid_bh % H).to(tl.int64)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd, mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum(N, (pid_m + 1) * BLOCK_M) if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        col_ok = offs_n < N
        k_t = tl.load(k_base + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd, mask=col_ok[None, :],
                      other=0.0)
        s = tl.dot(q, k_t, input_precision=DOT_PRECISION) * sm_scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_ref)
        p = tl.exp(s - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             (acc / l_safe[:, None]).to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, m_i + tl.log(l_safe), mask=row_ok)


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=64, block_n=64):
    batch, heads, n, d = _check_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    _check_blocks(block_m=block_m, block_n=block_n)
    o = torch.empty((batch, heads, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n, block_m) * batch * heads,)
    _flash_fwd_grouped[grid](
        q, k, v, o, lse, scale, n, heads,
        *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=bool(causal),
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o, lse
