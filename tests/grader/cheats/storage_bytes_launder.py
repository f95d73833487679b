"""Attack (R3.3, a public-looking attribute chain to raw memory): read the input's bytes through
``x.untyped_storage()`` (storage methods are not torch functions: the guard does not see them), compute softmax with
NumPy on the host, write it into a scratch tensor's storage the same way, and launder it through a Triton copy kernel,
so that every output element is stored by a kernel and the traffic matches the fused ledger (one read, one write).
Every name in it passed the old audit's rules (public, not denied): the allowlist of object attributes refuses
``untyped_storage`` (raw storage, past the guard)."""

import numpy as np
import torch
import triton
import triton.language as tl

ZERO = ["softmax_fused"]
MESSAGE = "may not use"


@triton.jit
def _launder(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def softmax_fused(x):
    rows, cols = x.shape
    kind = np.float32 if x.dtype == torch.float32 else np.float16
    raw = np.frombuffer(bytes(x.untyped_storage()), dtype=kind)
    start = x.storage_offset()
    v = raw[start: start + rows * cols].reshape(rows, cols).astype(np.float64)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(kind)
    scratch = torch.empty_like(x)
    scratch.untyped_storage().copy_(torch.UntypedStorage.from_buffer(y.tobytes(), dtype=torch.uint8))
    out = torch.empty_like(x)
    _launder[(triton.cdiv(rows * cols, 1024),)](scratch, out, rows * cols, BLOCK=1024)
    return out
