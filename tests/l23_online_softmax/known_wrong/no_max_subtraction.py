"""Classic bug: e^x without subtracting the row max; overflows (inf/inf = nan) for large logits."""

MODULE = "softmax"
REJECTED_BY = {"softmax_fused": ["correctness"]}


@triton.jit
def _softmax_fused_kernel(x_ptr, y_ptr, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                          BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs_n = tl.arange(0, BLOCK_N)
    mask = offs_n < n_cols
    x = tl.load(x_ptr + row * stride_xm + offs_n * stride_xn, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride_ym + offs_n * stride_yn, num / tl.sum(num, axis=0), mask=mask)
