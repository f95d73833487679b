"""Classic bug: no mask on the row load; the last row reads past the end of x (out of bounds)."""

MODULE = "softmax"
REJECTED_BY = {"softmax_fused": ["correctness", "efficiency"]}


@triton.jit
def _softmax_fused_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                          BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs_n = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_xm + offs_n * stride_xn).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_ym + offs_n * stride_yn, num / tl.sum(num, axis=0), mask=offs_n < n_cols)
