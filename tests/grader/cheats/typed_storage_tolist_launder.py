"""Attack (R3.3, a public-looking attribute chain to raw memory): read the input's values as Python floats through
its typed storage (``x.storage().tolist()``: a storage method, not a torch function, so the guard does not see it),
compute softmax in plain Python, store it element by element into a scratch tensor's typed storage
(``scratch.storage()[i] = v``) and launder it through a Triton copy kernel: every output element is stored by a
kernel, one read and one write. The old audit's rules let every name through; the allowlist of object attributes
refuses ``storage`` (raw storage, past the guard)."""

import math

import torch
import triton
import triton.language as tl

ZERO = ["softmax_fused"]
MESSAGE = "may not use"


@triton.jit
def _launder_rows(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def softmax_fused(x):
    rows, cols = x.shape
    flat = x.storage().tolist()[x.storage_offset(): x.storage_offset() + rows * cols]
    scratch = torch.empty_like(x)
    cells = scratch.storage()
    for i in range(rows):
        row = flat[i * cols: (i + 1) * cols]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        for j, v in enumerate(e):
            cells[i * cols + j] = v / total
    out = torch.empty_like(x)
    _launder_rows[(triton.cdiv(rows * cols, 1024),)](scratch, out, rows * cols, BLOCK=1024)
    return out
