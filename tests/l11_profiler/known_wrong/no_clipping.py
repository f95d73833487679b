"""Intervals not clipped to the step: the previous step's kernel and the all-reduce past its end count whole."""

MODULE = "profiler"
REJECTED_BY = {"gpu_time_breakdown": ["correctness"]}

_right_breakdown = gpu_time_breakdown


def gpu_time_breakdown(trace, step=None):
    out = _right_breakdown(trace, step)
    if step is None:
        return out
    lo = min(e["ts"] for e in complete_events(trace, ("user_annotation",)) if e.get("name") == step)
    hi = lo + out["window_us"]
    touching = [e for e in complete_events(trace, GPU_CATS) if e["ts"] < hi and e["ts"] + e["dur"] > lo]
    if not touching:
        return out
    whole = _right_breakdown({"traceEvents": touching})
    whole["window_us"], whole["idle_us"] = out["window_us"], max(0.0, out["window_us"] - whole["busy_us"])
    whole["idle_pct"] = 100.0 * whole["idle_us"] / whole["window_us"]
    return whole
