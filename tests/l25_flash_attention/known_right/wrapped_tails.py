"""Correct alternative: the tail tiles' rows of Q, K and V wrapped with `% N` instead of masked on the load (the
wrapped keys' scores are set to -inf, the wrapped query rows never stored): it loads the tail tiles' padding,
within the padded flash ledger, full marks."""

MODULE = "attention"
ACCEPTED = ["flash_attention_fwd"]


@triton.jit
def _flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, sm_scale, N, H,
                      stride_qb, stride_qh, stride_qm, stride_qd,
                      stride_kb, stride_kh, stride_kn, stride_kd,
                      stride_vb, stride_vh, stride_vn, stride_vd,
                      stride_ob, stride_oh, stride_om, stride_od,
                      stride_lb, stride_lh, stride_lm,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr):
    pid_m, pid_bh = tl.program_id(0), tl.program_id(1)
    b, h = (pid_bh // H).to(tl.int64), (pid_bh % H).to(tl.int64)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N
    q = tl.load(q_base + (offs_m % N)[:, None] * stride_qm + offs_d[None, :] * stride_qd)  # tail rows wrapped
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum(N, (pid_m + 1) * BLOCK_M) if CAUSAL else N  # causal: skip tiles right of the diagonal
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        col_ok = offs_n < N
        k_t = tl.load(k_base + (offs_n % N)[None, :] * stride_kn + offs_d[:, None] * stride_kd)  # keys past N wrapped
        s = tl.dot(q, k_t, input_precision=DOT_PRECISION) * sm_scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)  # a row that saw only masked keys: e^-inf = 0, not NaN
        alpha = tl.exp(m_i - m_ref)
        p = tl.exp(s - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + (offs_n % N)[:, None] * stride_vn + offs_d[None, :] * stride_vd)  # their p is 0
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # only rows past N have l = 0; they are not stored
    o = acc / l_safe[:, None]
    tl.store(o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
             o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, m_i + tl.log(l_safe), mask=row_ok)
