"""Attack: read the input's values on the host (float(x[i, j]), which no torch op refuses by name),
compute softmax in Python, and launder the result through a Triton copy kernel, so that every output
element is stored by a kernel and the traffic matches the fused ledger (one read, one write)."""

import math

import torch
import triton
import triton.language as tl

ZERO = ["softmax_fused"]
MESSAGE = "reads tensor values on the host"


@triton.jit
def _launder(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def softmax_fused(x):
    rows, cols = x.shape
    values = [[float(x[i, j]) for j in range(cols)] for i in range(rows)]
    out = torch.empty_like(x)
    for i, row in enumerate(values):
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        for j, v in enumerate(e):
            _launder[(1,)](torch.full((1,), v / total, dtype=x.dtype), out[i, j:], 1, BLOCK=1)
    return out
