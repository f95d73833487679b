"""Correct alternatives: waits first, then efficiency = 1 − wait/max; ridges in FLOP/s over B/s."""

MODULE = "landscape"
ACCEPTED = ["hetero_dp_step", "ridge_points"]


def hetero_dp_step(compute_ms):
    times = _check_reals("compute_ms", compute_ms)
    step = max(times)
    waits = [step - t for t in times]
    eff = [1 - w / step for w in waits]
    return {"iteration_ms": step, "wait_ms": waits, "efficiency": eff, "mean_efficiency": sum(eff) / len(eff)}


def ridge_points(table):
    out = {}
    for name, (tflops, tb_per_s) in _check_table(table).items():
        out[name] = (tflops * 1e12) / (tb_per_s * 1e12)
    return out
