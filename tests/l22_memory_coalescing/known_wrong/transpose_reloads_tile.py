"""Correct but wasteful: the transposed tile is stored in two halves, each loading the whole tile of x again (2x)."""

MODULE = "transpose"
REJECTED_BY = {"transpose": ["efficiency"]}


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < n_rows) & (offs_n[None, :] < n_cols)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn
    for half in tl.static_range(2):
        tile = tl.trans(tl.load(x_ptrs, mask=mask))  # the whole tile, loaded again for each half
        rows = tl.arange(0, BLOCK_N)[:, None]
        keep = (rows >= half * HALF) & (rows < (half + 1) * HALF) & tl.trans(mask)
        tl.store(y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn, tile, mask=keep)
