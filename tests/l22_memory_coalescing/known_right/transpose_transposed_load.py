"""Correct alternative: loads the tile already transposed (pointer arithmetic instead of tl.trans), 64 × 16 tiles."""

MODULE = "transpose"
ACCEPTED = ["transpose"]


@triton.jit
def _transpose_t_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_t = (offs_n[:, None] < n_cols) & (offs_m[None, :] < n_rows)
    tile_t = tl.load(x_ptr + offs_n[:, None] * stride_xn + offs_m[None, :] * stride_xm, mask=mask_t)
    tl.store(y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn, tile_t, mask=mask_t)


def transpose(x, block_m=32, block_n=32):
    n_rows, n_cols = _check_input(x)
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n_rows, 64), triton.cdiv(n_cols, 16))
    _transpose_t_kernel[grid](x, y, n_rows, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                              BLOCK_M=64, BLOCK_N=16)
    return y
