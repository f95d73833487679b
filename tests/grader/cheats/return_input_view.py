"""Attack: compute the softmax in place into x and return a view of x instead of a new tensor."""

ZERO = ["softmax_online"]


def softmax_online(x, block_n=128):
    n_rows, n_cols = _check_input(x)
    _softmax_online_kernel[(n_rows,)](x, x, n_cols, x.stride(0), x.stride(1), x.stride(0), x.stride(1),
                                      BLOCK_N=block_n)
    return x.view(x.shape)
