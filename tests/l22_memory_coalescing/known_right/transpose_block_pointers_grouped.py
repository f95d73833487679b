"""Correct alternative: block pointers with boundary checks (tl.make_block_ptr + boundary_check) for the load and
the store, on a 1-D grid walked in groups of GROUP_M rows of tiles (grouped program ordering): same traffic."""

MODULE = "transpose"
ACCEPTED = ["transpose"]


@triton.jit
def _transpose_bp_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(n_rows, BLOCK_M), tl.cdiv(n_cols, BLOCK_N)
    first_m = (pid // (GROUP_M * tiles_n)) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * tiles_n)) % rows_in_group
    pid_n = (pid % (GROUP_M * tiles_n)) // rows_in_group
    x_blk = tl.make_block_ptr(x_ptr, (n_rows, n_cols), (stride_xm, stride_xn), (pid_m * BLOCK_M, pid_n * BLOCK_N),
                              (BLOCK_M, BLOCK_N), (1, 0))
    y_blk = tl.make_block_ptr(y_ptr, (n_cols, n_rows), (stride_ym, stride_yn), (pid_n * BLOCK_N, pid_m * BLOCK_M),
                              (BLOCK_N, BLOCK_M), (1, 0))
    tile = tl.load(x_blk, boundary_check=(0, 1))
    tl.store(y_blk, tl.trans(tile), boundary_check=(0, 1))


def transpose(x, block_m=32, block_n=32):
    n_rows, n_cols = _check_input(x)
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n_rows, block_m) * triton.cdiv(n_cols, block_n),)
    _transpose_bp_kernel[grid](x, y, n_rows, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                               BLOCK_M=block_m, BLOCK_N=block_n, GROUP_M=4)
    return y
