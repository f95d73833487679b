"""Classic bug: GPipe's peak counted as the micro-batches whose forward has ENDED and whose backward has not
started (the stash between the phases), which drops the ones being computed."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    clean, m = _check_orders(orders)
    t_f = _check_times("t_fwd", t_fwd, len(clean))
    peaks = []
    for s in range(len(clean)):
        events = []
        for i in range(m):
            events += [(out["start"][(s, "F", i)] + t_f[s], 1), (out["start"][(s, "B", i)], -1)]
        held = peak = 0
        for _, delta in sorted(events):
            held += delta
            peak = max(peak, held)
        peaks.append(peak)
    out["peak_in_flight"] = peaks
    return out
