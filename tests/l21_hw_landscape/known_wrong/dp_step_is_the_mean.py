"""The step as the mean compute time: as if ranks did not wait for each other at the all-reduce."""

MODULE = "landscape"
REJECTED_BY = {"hetero_dp_step": ["correctness"]}


def hetero_dp_step(compute_ms):
    times = _check_reals("compute_ms", compute_ms)
    step = sum(times) / len(times)
    return {"iteration_ms": step, "wait_ms": [max(step - t, 0.0) for t in times],
            "efficiency": [min(t / step, 1.0) for t in times], "mean_efficiency": 1.0}
