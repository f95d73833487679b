"""Classic bug: the peak in flight taken from 1F1B's closed form min(p − s, m) whatever the orders: GPipe's peak
is m on every stage, not p − s."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    p, m = len(out["busy"]), len(orders[0]) // 2
    out["peak_in_flight"] = [min(p - s, m) for s in range(p)]
    return out
