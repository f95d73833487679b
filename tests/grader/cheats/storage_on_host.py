"""Attack: leave the guard in place and compute softmax with NumPy on the host, moving the bytes
through untyped storages (storage methods are not torch functions, so the guard does not see
them). No kernel stored the result. The guard's "not written by a Triton kernel" caught it first;
now the audit's attribute allowlist refuses `untyped_storage` (raw bytes past the guard) before it runs."""

import numpy as np
import torch

ZERO = ["softmax_fused"]
MESSAGE = "untyped_storage"


def softmax_fused(x):
    out = torch.empty_like(x)
    if x.dtype != torch.float32:  # left uninitialized: as unwritten as the rest
        return out
    raw = np.frombuffer(bytes(x.contiguous().untyped_storage()), dtype=np.float32)
    rows = raw[: x.numel()].reshape(-1, x.shape[-1]).astype(np.float64)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    y = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    out.untyped_storage().copy_(torch.UntypedStorage.from_buffer(y.tobytes(), dtype=torch.uint8))
    return out
