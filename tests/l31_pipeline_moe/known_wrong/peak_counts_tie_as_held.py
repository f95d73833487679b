"""Classic bug: a backward that ends at t still holds its slot when a forward starts at t, so 1F1B's steady state
looks like p − s + 1 micro-batches in flight."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    clean, m = _check_orders(orders)
    t_b = _check_times("t_bwd", t_bwd, len(clean))
    peaks = []
    for s, ops in enumerate(clean):
        events = sorted((out["start"][(s, "F", i)], 0, 1) if k == "F" else
                        (out["start"][(s, "B", i)] + t_b[s], 1, -1) for k, i in ops)
        held = peak = 0
        for _, _, delta in events:
            held += delta
            peak = max(peak, held)
        peaks.append(peak)
    out["peak_in_flight"] = peaks
    return out
