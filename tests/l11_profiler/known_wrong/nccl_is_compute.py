"""Every kernel counted as compute: the all-reduce disappears into compute_us, so communication looks free."""

MODULE = "profiler"
REJECTED_BY = {"gpu_time_breakdown": ["correctness"]}

_right_breakdown = gpu_time_breakdown


def gpu_time_breakdown(trace, step=None):
    renamed = {"traceEvents": [dict(e, name=str(e.get("name")).replace("nccl", "x").replace("NCCL", "x"))
                               if isinstance(e, dict) else e for e in trace_events(trace)]}
    return _right_breakdown(renamed, step)
