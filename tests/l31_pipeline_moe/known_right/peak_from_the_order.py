"""Another correct algorithm: the peak in flight read from each stage's order alone (F's started minus B's ended
before each operation: a stage runs one operation at a time, so the clock cannot change it), and 1F1B written as
"run a forward while fewer than min(p − s, m) micro-batches are in flight"."""

MODULE = "pipeline"
ACCEPTED = ["pipeline_orders", "simulate_pipeline"]

_reference_simulate = simulate_pipeline


def pipeline_orders(p, m, kind):
    p, m = check_int("p", p, 1), check_int("m", m, 1)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    out = []
    for s in range(p):
        limit = m if kind == "gpipe" else min(p - s, m)
        ops, f, b = [], 0, 0
        while b < m:
            if f < m and f - b < limit:
                ops.append(("F", f))
                f += 1
            else:
                ops.append(("B", b))
                b += 1
        out.append(ops)
    return out


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    peaks = []
    for stage in orders:
        held = peak = 0
        for kind, _ in stage:
            if kind == "F":
                held += 1
                peak = max(peak, held)
            else:
                held -= 1  # counted after the B: it held its slot while it ran, which never raises the peak
        peaks.append(peak)
    out["peak_in_flight"] = peaks
    return out
