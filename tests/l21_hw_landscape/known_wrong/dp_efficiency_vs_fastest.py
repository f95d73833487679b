"""Efficiency measured against the fastest rank (t_min / t_i): the slow rank looks idle, the fast one busy."""

MODULE = "landscape"
REJECTED_BY = {"hetero_dp_step": ["correctness"]}


def hetero_dp_step(compute_ms):
    times = _check_reals("compute_ms", compute_ms)
    slowest, fastest = max(times), min(times)
    eff = [fastest / t for t in times]
    return {"iteration_ms": slowest, "wait_ms": [slowest - t for t in times], "efficiency": eff,
            "mean_efficiency": sum(eff) / len(eff)}
