"""Correct alternative: the tail tile's lanes wrapped with `% n_cols` instead of masked on the load (set to -inf
before use, so they add nothing), and pass 1 walking the tiles from the last to the first: it loads the tail
tile's padding, within the padded online ledger, full marks."""

MODULE = "softmax"
ACCEPTED = ["softmax_online"]


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_xm, y_ptr + row * stride_ym
    m_lane = tl.full([BLOCK_N], -float("inf"), tl.float32)
    d_lane = tl.zeros([BLOCK_N], tl.float32)
    for tile in range(tl.cdiv(n_cols, BLOCK_N) - 1, -1, -1):
        offs_n = tile * BLOCK_N + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + (offs_n % n_cols) * stride_xn).to(tl.float32)  # in-bounds duplicates past the edge
        x = tl.where(offs_n < n_cols, x, -float("inf"))
        m_new = tl.maximum(m_lane, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        d_lane = d_lane * tl.exp(m_lane - m_safe) + tl.exp(x - m_safe)
        m_lane = m_new
    m = tl.max(m_lane, axis=0)
    d = tl.sum(d_lane * tl.exp(m_lane - m), axis=0)
    for start in range(0, n_cols, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + (offs_n % n_cols) * stride_xn).to(tl.float32)
        tl.store(y_row + offs_n * stride_yn, (tl.exp(x - m) / d).to(y_ptr.dtype.element_ty), mask=offs_n < n_cols)
