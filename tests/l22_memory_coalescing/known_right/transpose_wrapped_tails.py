"""Correct alternative: the tail tile's rows and columns wrapped with `% n_rows` / `% n_cols` instead of masked
on the load (the store is masked): it loads the tail tiles' padding, within the padded copy ledger, full marks."""

MODULE = "transpose"
ACCEPTED = ["transpose"]


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows, cols = offs_m % n_rows, offs_n % n_cols  # in-bounds duplicates past the edge, never stored
    tile = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn)
    mask = (offs_m[:, None] < n_rows) & (offs_n[None, :] < n_cols)
    tl.store(y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn, tl.trans(tile), mask=tl.trans(mask))
