"""GPU busy time as the sum of event durations: two streams at once are counted twice."""

MODULE = "profiler"
REJECTED_BY = {"gpu_time_breakdown": ["correctness"]}

_right_breakdown = gpu_time_breakdown


def gpu_time_breakdown(trace, step=None):
    out = _right_breakdown(trace, step)
    out["busy_us"] = min(out["window_us"], out["compute_us"] + out["nccl_us"] + out["memcpy_us"] + out["memset_us"])
    out["idle_us"] = out["window_us"] - out["busy_us"]
    out["idle_pct"] = 100.0 * out["idle_us"] / out["window_us"] if out["window_us"] else 0.0
    return out
