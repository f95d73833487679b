"""The bound taken as 1 / (part's fraction of the step): the speedup if the *rest* vanished, not the part."""

MODULE = "profiler"
REJECTED_BY = {"amdahl": ["correctness"]}

_right_amdahl = amdahl


def amdahl(total_s, part_s, part_new_s):
    out = _right_amdahl(total_s, part_s, part_new_s)
    out["max_speedup"] = total_s / part_s if part_s else math.inf
    return out
