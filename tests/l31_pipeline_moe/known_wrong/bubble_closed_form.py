"""Classic bug: the bubble from the closed form (p − 1)/(m + p − 1) instead of the simulated idle time: right only
when every stage takes the same time."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    p, m = len(orders), len(orders[0]) // 2
    out["bubble_fraction"] = (p - 1) / (m + p - 1)
    return out
