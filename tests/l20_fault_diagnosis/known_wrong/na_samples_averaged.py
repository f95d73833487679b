"""Averages N/A samples as zeros: one missing SMACT reading flags a healthy GPU."""

MODULE = "diagnosis"
REJECTED_BY = {"slow_gpus": ["correctness"]}

_right_slow = slow_gpus


def slow_gpus(dmon, field="SMCLK", threshold=3.5):
    if isinstance(dmon, dict) and all(isinstance(v, dict) for v in dmon.values()):
        dmon = {g: {f: [0.0 if v is None else v for v in vs] for f, vs in fs.items()} for g, fs in dmon.items()}
    return _right_slow(dmon, field, threshold)
