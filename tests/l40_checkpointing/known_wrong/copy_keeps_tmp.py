"""Copies the temporary file onto path (keeping it as a "backup"): path is rewritten in place, .tmp litters."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}

import shutil


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
    shutil.copyfile(tmp, path)
