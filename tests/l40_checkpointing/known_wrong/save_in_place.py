"""The lecture's baseline: torch.save straight onto path. A crash mid-write tears the only checkpoint."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty str")
    with open(path, "wb") as f:
        torch.save(state, f)
