"""Classic bug: idle time over busy time (Megatron's ratio, (p − 1)/m on equal stages) reported as the fraction
of wall time."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    busy, p = sum(out["busy"]), len(out["busy"])
    out["bubble_fraction"] = (p * out["makespan"] - busy) / busy
    return out
