"""Classic bug: "transposes" by swapping strides: x's memory copied as-is, viewed n_cols × n_rows (not contiguous)."""

MODULE = "transpose"
REJECTED_BY = {"transpose": ["correctness", "efficiency"]}


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < n_rows) & (offs_n[None, :] < n_cols)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)
    tl.store(y_ptr + offs_m[:, None] * n_cols + offs_n[None, :], tile, mask=mask)


def transpose(x, block_m=32, block_n=32):
    n_rows, n_cols = _check_input(x)
    y = torch.empty_strided((n_cols, n_rows), (1, n_cols), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n_rows, block_m), triton.cdiv(n_cols, block_n))
    _copy_kernel[grid](x, y, n_rows, n_cols, x.stride(0), x.stride(1), BLOCK_M=block_m, BLOCK_N=block_n)
    return y
