"""Flags |z| > threshold: a GPU clocked above its peers is reported as slow."""

MODULE = "diagnosis"
REJECTED_BY = {"slow_gpus": ["correctness"]}

HIGH_IS_BAD = ()
_right_slow = slow_gpus


def slow_gpus(dmon, field="SMCLK", threshold=3.5):
    low = _right_slow(dmon, field, threshold)
    global HIGH_IS_BAD
    HIGH_IS_BAD = (field,)
    try:
        high = _right_slow(dmon, field, threshold)
    finally:
        HIGH_IS_BAD = ()
    return sorted(set(low) | set(high))
