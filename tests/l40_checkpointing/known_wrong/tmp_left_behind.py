"""Temporary file and rename, but a failure leaves the half-written .tmp behind."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty str")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
