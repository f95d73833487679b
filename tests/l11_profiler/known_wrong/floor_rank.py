"""Percentile as sorted(latencies)[int(p/100·n)]: a rank too high when p/100·n is whole (p50 of 8: 15)."""

MODULE = "profiler"
REJECTED_BY = {"launch_latency": ["correctness"]}

_right_latency = launch_latency


def launch_latency(trace):
    out = _right_latency(trace)
    launched = {correlation(e): e["ts"] for e in complete_events(trace, ("cuda_runtime",))
                if e.get("name") in LAUNCH_NAMES and correlation(e) is not None}
    lat = sorted(e["ts"] - launched[correlation(e)] for e in complete_events(trace, GPU_CATS)
                 if correlation(e) in launched)
    if lat:
        out["p50_us"] = float(lat[min(len(lat) - 1, int(0.5 * len(lat)))])
        out["p90_us"] = float(lat[min(len(lat) - 1, int(0.9 * len(lat)))])
    return out
