"""Classic Amdahl mistake (lecture §0.2): report the part's own speedup (40 → 15 ms: 2.67×) as the step's."""

MODULE = "profiler"
REJECTED_BY = {"amdahl": ["correctness"]}

_right_amdahl = amdahl


def amdahl(total_s, part_s, part_new_s):
    out = _right_amdahl(total_s, part_s, part_new_s)
    out["speedup"] = part_s / part_new_s if part_new_s else math.inf
    return out
