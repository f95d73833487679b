"""Cheat (atomics as free loads): softmax_fused in column tiles, two passes over x: the max and sum with loads, then
y from x re-read by atomic adds of 0 (they return the elements); the atomics were counted apart from the loads, so
the loads matched "read x once". bfloat16 (no atomic add in the interpreter): the honest kernel."""

MODULE = "softmax"
REJECTED_BY = {"softmax_fused": ["efficiency"]}


@triton.jit
def _two_pass_atomic_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                            BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride_xm, y_ptr + row * stride_ym
    m_lane = tl.full([BLOCK_N], -float("inf"), tl.float32)
    d_lane = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):  # pass 1: loads
        offs_n = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs_n * stride_xn, mask=offs_n < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_lane, x)
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        d_lane = d_lane * tl.exp(m_lane - m_safe) + tl.exp(x - m_safe)
        m_lane = m_new
    m = tl.max(m_lane, axis=0)
    d = tl.sum(d_lane * tl.exp(m_lane - m), axis=0)
    for start in range(0, n_cols, BLOCK_N):  # pass 2: x again, through atomic adds of 0
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = offs_n < n_cols
        x = tl.atomic_add(x_row + offs_n * stride_xn, tl.zeros([BLOCK_N], x_ptr.dtype.element_ty), mask=mask)
        y = tl.exp(x.to(tl.float32) - m) / d
        tl.store(y_row + offs_n * stride_yn, y.to(y_ptr.dtype.element_ty), mask=mask)

def softmax_fused(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = _check_input(x, MAX_COLS)
    y = torch.empty_like(x)
    if x.dtype == torch.bfloat16:
        _softmax_fused_kernel[(n_rows,)](x, y, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                         BLOCK_N=triton.next_power_of_2(n_cols))
        return y
    _two_pass_atomic_kernel[(n_rows,)](x, y, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1), BLOCK_N=128)
    return y
