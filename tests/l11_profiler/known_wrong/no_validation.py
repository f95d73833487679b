"""No argument checks: right values for valid input; bad times, steps, categories and broken events not refused."""

MODULE = "profiler"
REJECTED_BY = {
    "amdahl": ["correctness"],
    "gpu_time_breakdown": ["correctness"],
    "launch_latency": ["correctness"],
    "self_time_by_op": ["correctness"],
}

_right = {"amdahl": amdahl, "gpu_time_breakdown": gpu_time_breakdown, "launch_latency": launch_latency,
          "self_time_by_op": self_time_by_op}


def _quiet(fn, fallback):
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, KeyError, AttributeError, ZeroDivisionError):
            return fallback
    return call


amdahl = _quiet(_right["amdahl"], {"new_total_s": 0.0, "speedup": 1.0, "time_saved_fraction": 0.0,
                                   "max_speedup": 1.0})
gpu_time_breakdown = _quiet(_right["gpu_time_breakdown"], dict.fromkeys(BREAKDOWN_KEYS, 0.0))
launch_latency = _quiet(_right["launch_latency"], {"n": 0, "p50_us": 0.0, "p90_us": 0.0, "max_us": 0.0,
                                                   "unmatched_gpu": 0})
self_time_by_op = _quiet(_right["self_time_by_op"], {})
