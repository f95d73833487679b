"""Correct alternative: block pointers (tl.make_block_ptr + tl.advance + boundary_check, zero padding) for the Q, K
and V tiles instead of masked pointer arithmetic: the tail tiles' out-of-range rows read as zeros (their keys'
scores are set to -inf, their query rows never stored), the same flash ledger, full marks."""

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
    start_m = pid_m * BLOCK_M
    q_blk = tl.make_block_ptr(q_ptr + b * stride_qb + h * stride_qh, (N, HEAD_DIM), (stride_qm, stride_qd),
                              (start_m, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    kt_blk = tl.make_block_ptr(k_ptr + b * stride_kb + h * stride_kh, (HEAD_DIM, N), (stride_kd, stride_kn),
                               (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))  # K^T: the tile is read transposed
    v_blk = tl.make_block_ptr(v_ptr + b * stride_vb + h * stride_vh, (N, HEAD_DIM), (stride_vn, stride_vd),
                              (0, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    offs_m = start_m + tl.arange(0, BLOCK_M)
    q = tl.load(q_blk, boundary_check=(0,), padding_option="zero")
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    hi = tl.minimum(N, start_m + BLOCK_M) if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k_t = tl.load(kt_blk, boundary_check=(1,), padding_option="zero")
        s = tl.dot(q, k_t, input_precision=DOT_PRECISION) * sm_scale
        keep = (offs_n < N)[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= offs_n[None, :])
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_ref)
        p = tl.exp(s - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_blk, boundary_check=(0,), padding_option="zero")
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_new
        kt_blk = tl.advance(kt_blk, (0, BLOCK_N))
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    o_blk = tl.make_block_ptr(o_ptr + b * stride_ob + h * stride_oh, (N, HEAD_DIM), (stride_om, stride_od),
                              (start_m, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    tl.store(o_blk, (acc / l_safe[:, None]).to(o_ptr.dtype.element_ty), boundary_check=(0,))
    tl.store(lse_ptr + b * stride_lb + h * stride_lh + offs_m * stride_lm, m_i + tl.log(l_safe), mask=offs_m < N)
