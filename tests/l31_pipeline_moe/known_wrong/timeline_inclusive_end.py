"""Classic bug: the timeline lists an operation at its end tick too ([start, end] instead of [start, end))."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}

_reference_simulate = simulate_pipeline


def simulate_pipeline(orders, t_fwd, t_bwd):
    out = _reference_simulate(orders, t_fwd, t_bwd)
    p = len(out["busy"])
    t_f, t_b = _check_times("t_fwd", t_fwd, p), _check_times("t_bwd", t_bwd, p)
    timeline = [[] for _ in range(out["makespan"] + 1)]
    for (s, kind, i), t0 in out["start"].items():
        for t in range(t0, t0 + (t_f[s] if kind == "F" else t_b[s]) + 1):
            timeline[t].append((s, i, kind))
    out["timeline"] = [sorted(x) for x in timeline[: out["makespan"]]]
    return out
