"""The temporary file goes to the system temp directory: the rename may cross filesystems (a copy, not atomic)."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}

import tempfile


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty str")
    fd, tmp = tempfile.mkstemp(suffix=".tmp", dir=os.path.join(tempfile.gettempdir()))
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    d = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    os.fsync(d)
    os.close(d)
