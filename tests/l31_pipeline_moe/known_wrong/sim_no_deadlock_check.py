"""Classic bug: no checks: malformed orders and deadlocks come back as a result (the stuck operations are left
out) instead of a ValueError."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}


def simulate_pipeline(orders, t_fwd, t_bwd):
    p = len(orders)
    t_f = [t_fwd] * p if isinstance(t_fwd, int | float) else list(t_fwd) + [1] * p
    t_b = [t_bwd] * p if isinstance(t_bwd, int | float) else list(t_bwd) + [1] * p
    m = max(1, len(orders[0]) // 2)
    start, end = {}, {}
    nxt, free = [0] * p, [0] * p
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while nxt[s] < len(orders[s]):
                kind, i = orders[s][nxt[s]]
                dep = _dependency((kind, i), s, p)
                if dep is not None and dep not in end:
                    break
                t0 = max(free[s], end[dep] if dep is not None else 0)
                start[(s, kind, i)] = t0
                free[s] = end[(s, kind, i)] = t0 + (t_f[s] if kind == "F" else t_b[s])
                nxt[s] += 1
                moved = True
    makespan = int(max(end.values(), default=1))
    busy = [m * (t_f[s] + t_b[s]) for s in range(p)]
    timeline = [[] for _ in range(makespan)]
    for (s, kind, i), t0 in start.items():
        for t in range(int(t0), int(end[(s, kind, i)])):
            timeline[t].append((s, i, kind))
    return {"makespan": makespan, "start": start, "busy": busy, "bubble_fraction": 1 - sum(busy) / (p * makespan),
            "peak_in_flight": [m] * p, "timeline": [sorted(x) for x in timeline]}
