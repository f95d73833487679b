"""The lecture's async engine: torch.save(tmp) then os.replace, never fsynced (a power cut can empty it)."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty str")
    tmp = path + ".tmp"
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
