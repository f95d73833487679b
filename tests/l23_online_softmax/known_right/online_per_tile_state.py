"""Correct alternative: one scalar (m, d) per row updated tile by tile, instead of one per lane."""

MODULE = "softmax"
ACCEPTED = ["softmax_online"]


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_xm, y_ptr + row * stride_ym
    m = tl.max(tl.full([BLOCK_N], -float("inf"), tl.float32), axis=0)
    d = tl.sum(tl.zeros([BLOCK_N], tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        d = d * tl.exp(m - m_safe) + tl.sum(tl.exp(x - m_safe), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < n_cols
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + offs_n * stride_yn, tl.exp(x - m) / d, mask=mask)
