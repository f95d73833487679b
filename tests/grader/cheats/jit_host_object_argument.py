"""Attack (host code in an interpreted kernel): pass a host object as a constexpr argument; its
`sum` method (spelled like a tile method, so the call looks like kernel code) computes softmax
with NumPy on the tile's backing array. The launch must refuse host objects as arguments."""

import numpy as np

ZERO = ["softmax_online"]
MESSAGE = "may not use"


class _Helper:
    def sum(self, tile):
        v = tile.handle.data.astype(np.float64)
        e = np.exp(v - v.max())
        tile.handle.data[...] = (e / e.sum()).astype(np.float32)
        return tile


@triton.jit
def _online_by_helper(x_ptr, y_ptr, n_cols, H: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
    tl.store(y_ptr + row * n_cols + offs, H.sum(x), mask=offs < n_cols)


def softmax_online(x, block_n=128):
    y = torch.empty_like(x)
    _online_by_helper[(x.shape[0],)](x, y, x.shape[1], H=_Helper(), BLOCK_N=triton.next_power_of_2(x.shape[1]))
    return y
