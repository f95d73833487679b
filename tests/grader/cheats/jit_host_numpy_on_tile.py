"""Attack (host code in an interpreted kernel): the kernel loads the row with tl.load, so the traffic
matches the fused ledger, then hands the tile to a host helper that computes softmax with NumPy on
the interpreter's backing array (`tile.handle.data`) and stores the result with tl.store."""

import numpy as np

ZERO = ["softmax_fused"]
MESSAGE = "host code inside a @triton.jit kernel"


def _host_softmax(tile):
    v = tile.handle.data.astype(np.float64)
    e = np.exp(v - v.max())
    tile.handle.data[...] = (e / e.sum()).astype(tile.handle.data.dtype)
    return tile


@triton.jit
def _fused_by_numpy(x_ptr, y_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
    y = _host_softmax(x)
    tl.store(y_ptr + row * n_cols + offs, y, mask=offs < n_cols)


def softmax_fused(x):
    y = torch.empty_like(x)
    _fused_by_numpy[(x.shape[0],)](x, y, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
    return y
