"""Classic bug: the online update adds e^(x - m_new) without rescaling d by e^(m_old - m_new)."""

MODULE = "softmax"
REJECTED_BY = {"softmax_online": ["correctness", "efficiency"]}


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_xm, y_ptr + row * stride_ym
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    d = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.maximum(m, x)
        d = d + tl.exp(x - tl.where(m == -float("inf"), 0.0, m))  # the old d keeps its old max
    m_row = tl.max(m, axis=0)
    d_row = tl.sum(d * tl.exp(m - m_row), axis=0)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < n_cols
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + offs_n * stride_yn, tl.exp(x - m_row) / d_row, mask=mask)
