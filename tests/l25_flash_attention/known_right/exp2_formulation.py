"""Correct alternative (the Triton tutorial's form): scale folded with log2(e), exp2 throughout, lse converted
back to the natural log; other default tiles (128 query rows, 32 keys)."""

MODULE = "attention"
ACCEPTED = ["flash_attention_fwd"]

LN2 = 0.6931471805599453


@triton.jit
def _flash_exp2_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, qk_scale, N, H,
                       stride_qb, stride_qh, stride_qm, stride_qd,
                       stride_kb, stride_kh, stride_kn, stride_kd,
                       stride_vb, stride_vh, stride_vn, stride_vd,
                       stride_ob, stride_oh, stride_om, stride_od,
                       stride_lb, stride_lh, stride_lm,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr):
    pid_m, pid_bh = tl.program_id(0), tl.program_id(1)
    b, h = (pid_bh // H).to(tl.int64), (pid_bh % H).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=row_ok[:, None], other=0.0)
    m2 = tl.full([BLOCK_M], -float("inf"), tl.float32)  # running max in log2 units
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum(N, (pid_m + 1) * BLOCK_M) if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        col_ok = offs_n < N
        k_t = tl.load(k_ptr + b * stride_kb + h * stride_kh + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd,
                      mask=col_ok[None, :], other=0.0)
        s2 = tl.dot(q, k_t, input_precision=DOT_PRECISION) * qk_scale  # scores · log2(e)
        keep = col_ok[None, :] & (offs_m[:, None] >= offs_n[None, :]) if CAUSAL else col_ok[None, :]
        s2 = tl.where(keep, s2, -float("inf"))
        m_new = tl.maximum(m2, tl.max(s2, axis=1))
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp2(m2 - m_ref)
        p = tl.exp2(s2 - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + b * stride_vb + h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m2 = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             (acc / l_safe[:, None]).to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, (m2 + tl.log2(l_safe)) * 0.6931471805599453,
             mask=row_ok)


def flash_attention_fwd(q, k, v, causal=False, sm_scale=None, *, block_m=128, block_n=32):
    batch, heads, n, d = _check_qkv(q, k, v)
    scale = _softmax_scale(d, sm_scale)
    _check_blocks(block_m=block_m, block_n=block_n)
    o = torch.empty((batch, heads, n, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n), dtype=torch.float32, device=q.device)
    _flash_exp2_kernel[(triton.cdiv(n, block_m), batch * heads)](
        q, k, v, o, lse, scale / LN2, n, heads, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=bool(causal),
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o, lse
