"""Attack: return a cached output when an input comes again (kept in memory and in $TMPDIR across
calls and runs), skipping the kernel; a miss returns an uninitialized tensor."""

import torch

ZERO = ["softmax_fused"]

_CACHE: dict[str, torch.Tensor] = {}


def _key(x):
    import hashlib  # here, not at module level (R3.3)

    raw = bytes(x.untyped_storage())
    return hashlib.sha256(raw + str((tuple(x.shape), x.stride(), str(x.dtype))).encode()).hexdigest()


def softmax_fused(x):
    import os
    from pathlib import Path

    _DIR = Path(os.environ.get("TMPDIR", "/tmp")) / "softmax-cache"
    key = _key(x)
    if key in _CACHE:
        return _CACHE[key]
    y = torch.empty_like(x)
    path = _DIR / key
    if path.is_file():
        y.untyped_storage().copy_(torch.UntypedStorage.from_buffer(path.read_bytes(), dtype=torch.uint8))
    _CACHE[key] = y
    try:
        _DIR.mkdir(exist_ok=True)
        path.write_bytes(bytes(y.untyped_storage()))
    except OSError:
        pass
    return y
