"""Launches paired with GPU work by time order (the i-th launch with the i-th GPU start), not by correlation ID."""

MODULE = "profiler"
REJECTED_BY = {"launch_latency": ["correctness"]}


def launch_latency(trace):
    launches = sorted(e["ts"] for e in complete_events(trace, ("cuda_runtime",)) if e.get("name") in LAUNCH_NAMES)
    work = sorted(e["ts"] for e in complete_events(trace, GPU_CATS))
    latencies = sorted(g - c for c, g in zip(launches, work, strict=False))
    n = len(latencies)

    def rank(p):
        return float(latencies[-(-p * n // 100) - 1]) if n else 0.0

    return {"n": n, "p50_us": rank(50), "p90_us": rank(90), "max_us": rank(100), "unmatched_gpu": len(work) - n}
