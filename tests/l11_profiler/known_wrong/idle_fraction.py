"""idle_pct returned as a fraction (0.899), not a percentage."""

MODULE = "profiler"
REJECTED_BY = {"gpu_time_breakdown": ["correctness"]}

_right_breakdown = gpu_time_breakdown


def gpu_time_breakdown(trace, step=None):
    out = _right_breakdown(trace, step)
    out["idle_pct"] /= 100.0
    return out
