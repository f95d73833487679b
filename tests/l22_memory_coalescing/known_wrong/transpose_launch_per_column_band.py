"""Correct but launch-bound: the host loops over column bands and launches one kernel per band (efficiency only)."""

MODULE = "transpose"
REJECTED_BY = {"transpose": ["efficiency"]}


def transpose(x, block_m=32, block_n=32):
    n_rows, n_cols = _check_input(x)
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    for start in range(0, n_cols, block_n):
        xs, ys = x[:, start:start + block_n], y[start:start + block_n]
        _transpose_kernel[(triton.cdiv(n_rows, block_m), 1)](
            xs, ys, n_rows, xs.shape[1], xs.stride(0), xs.stride(1), ys.stride(0), ys.stride(1),
            BLOCK_M=block_m, BLOCK_N=block_n)
    return y
