"""Correct but not flash: every S tile is written to an n×n buffer in global memory and read back (efficiency only)."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_fwd": ["efficiency"]}


@triton.jit
def _scores_roundtrip_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, s_ptr, sm_scale, N, H,
                             stride_qb, stride_qh, stride_qm, stride_qd,
                             stride_kb, stride_kh, stride_kn, stride_kd,
                             stride_vb, stride_vh, stride_vn, stride_vd,
                             stride_ob, stride_oh, stride_om, stride_od,
                             stride_lb, stride_lh, stride_lm,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr):
    pid_m, pid_bh = tl.program_id(0), tl.program_id(1)
    b, h = (pid_bh // H).to(tl.int64), (pid_bh % H).to(tl.int64)
    s_base = s_ptr + pid_bh.to(tl.int64) * N * N
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, N, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        col_ok = offs_n < N
        k_t = tl.load(k_ptr + b * stride_kb + h * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd,
                      mask=col_ok[None, :], other=0.0)
        s_ptrs = s_base + offs_m[:, None] * N + offs_n[None, :]
        both = row_ok[:, None] & col_ok[None, :]
        tl.store(s_ptrs, tl.dot(q, k_t, input_precision=DOT_PRECISION) * sm_scale, mask=both)  # S to HBM...
        s = tl.load(s_ptrs, mask=both, other=0.0)  # ...and back
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_ref)
        p = tl.exp(s - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + b * stride_vb + h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             (acc / l_safe[:, None]).to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, m_i + tl.log(l_safe), mask=row_ok)


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=64, block_n=64):
    batch, heads, n, d = _check_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    o = torch.empty((batch, heads, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n), dtype=torch.float32, device=q.device)
    scores = torch.empty((batch * heads, n, n), dtype=torch.float32, device=q.device)
    _scores_roundtrip_kernel[(triton.cdiv(n, block_m), batch * heads)](
        q, k, v, o, lse, scores, scale, n, heads, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=bool(causal),
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o, lse
