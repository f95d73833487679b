"""Classic bug: per-stage times read as stage 0's times on every stage (a slow stage does not slow anyone)."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    f = t_fwd if isinstance(t_fwd, int) else t_fwd[0]
    b = t_bwd if isinstance(t_bwd, int) else t_bwd[0]
    _check_times("t_fwd", t_fwd, len(orders))
    _check_times("t_bwd", t_bwd, len(orders))
    return _reference_simulate(orders, f, b)
