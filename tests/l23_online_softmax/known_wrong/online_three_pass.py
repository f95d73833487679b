"""Correct but not online: separate passes for the max, the sum and the output read x three times."""

MODULE = "softmax"
REJECTED_BY = {"softmax_online": ["efficiency"]}


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_xm, y_ptr + row * stride_ym
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.maximum(m, x)
    m_row = tl.max(m, axis=0)
    d = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        d += tl.exp(x - m_row)
    d_row = tl.sum(d, axis=0)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < n_cols
        x = tl.load(x_row + offs_n * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + offs_n * stride_yn, tl.exp(x - m_row) / d_row, mask=mask)
