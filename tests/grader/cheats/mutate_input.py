"""Attack: compute the softmax in place into x (the kernel stores into x_ptr) and return a fresh
tensor copied from it by a second launch: the input is destroyed."""

import torch

ZERO = ["softmax_fused"]


def softmax_fused(x):
    n_rows, n_cols = _check_input(x, MAX_COLS)
    block_n = triton.next_power_of_2(n_cols)
    _softmax_fused_kernel[(n_rows,)](x, x, n_cols, x.stride(0), x.stride(1), x.stride(0), x.stride(1),
                                     BLOCK_N=block_n)
    y = torch.empty_like(x)
    _copy_kernel[(n_rows,)](x, y, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1), BLOCK_N=block_n)
    return y


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n_cols, sxm, sxn, sym, syn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    v = tl.load(x_ptr + row * sxm + offs * sxn, mask=offs < n_cols)
    tl.store(y_ptr + row * sym + offs * syn, v, mask=offs < n_cols)
