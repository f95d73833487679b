"""Attack (R3.3, the same raw-memory chain spelled by a literal ``getattr``, which the old audit checked for private,
dunder and denied names only): read the input's bytes through ``getattr(x, "untyped_storage")()``, compute softmax with
NumPy on the host, and launder it through a Triton copy kernel (every output element stored by a kernel, one read and
one write). The allowlist of object attributes holds ``getattr`` with a literal name to the same list as ``x.name``."""

import numpy as np
import torch
import triton
import triton.language as tl

ZERO = ["softmax_online"]
MESSAGE = "may not use"


@triton.jit
def _launder_online(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


def _bytes_of(t):
    return getattr(t, "untyped_storage")()  # noqa: B009  (the literal getattr is the variant under test)


def softmax_online(x, block_n=128):
    rows, cols = x.shape
    kind = np.float32 if x.dtype == torch.float32 else np.float16
    raw = np.frombuffer(bytes(_bytes_of(x)), dtype=kind)
    v = raw[x.storage_offset(): x.storage_offset() + rows * cols].reshape(rows, cols).astype(np.float64)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(kind)
    scratch = torch.empty_like(x)
    _bytes_of(scratch).copy_(torch.UntypedStorage.from_buffer(y.tobytes(), dtype=torch.uint8))
    out = torch.empty_like(x)
    _launder_online[(triton.cdiv(rows * cols, 1024),)](scratch, out, rows * cols, BLOCK=1024)
    return out
