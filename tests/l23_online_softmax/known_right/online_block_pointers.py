"""Correct alternative: block pointers with boundary checks (tl.make_block_ptr + boundary_check, zero padding,
then -inf past the edge) walking each row tile by tile with tl.advance: same traffic as masked loads."""

MODULE = "softmax"
ACCEPTED = ["softmax_online"]


@triton.jit
def _softmax_online_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                           BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    n_rows = tl.num_programs(0)
    x_blk = tl.make_block_ptr(x_ptr, (n_rows, n_cols), (stride_xm, stride_xn), (row, 0), (1, BLOCK_N), (1, 0))
    y_blk = tl.make_block_ptr(y_ptr, (n_rows, n_cols), (stride_ym, stride_yn), (row, 0), (1, BLOCK_N), (1, 0))
    lanes = tl.arange(0, BLOCK_N)[None, :]
    m_lane = tl.full([1, BLOCK_N], -float("inf"), tl.float32)
    d_lane = tl.zeros([1, BLOCK_N], tl.float32)
    blk = x_blk
    for start in range(0, n_cols, BLOCK_N):
        x = tl.load(blk, boundary_check=(1,), padding_option="zero").to(tl.float32)
        x = tl.where(start + lanes < n_cols, x, -float("inf"))
        m_new = tl.maximum(m_lane, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        d_lane = d_lane * tl.exp(m_lane - m_safe) + tl.exp(x - m_safe)
        m_lane = m_new
        blk = tl.advance(blk, (0, BLOCK_N))
    m = tl.max(m_lane)
    d = tl.sum(d_lane * tl.exp(m_lane - m))
    for _ in range(0, n_cols, BLOCK_N):
        x = tl.load(x_blk, boundary_check=(1,), padding_option="zero").to(tl.float32)
        tl.store(y_blk, (tl.exp(x - m) / d).to(y_ptr.dtype.element_ty), boundary_check=(1,))
        x_blk = tl.advance(x_blk, (0, BLOCK_N))
        y_blk = tl.advance(y_blk, (0, BLOCK_N))
