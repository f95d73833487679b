"""Classic bug: p − s warm-up forwards instead of p − s − 1: one micro-batch more in flight on every stage."""

MODULE = "pipeline"
REJECTED_BY = {"pipeline_orders": ["correctness"]}


def pipeline_orders(p, m, kind):
    p, m = check_int("p", p, 1), check_int("m", m, 1)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    orders = []
    for s in range(p):
        if kind == "gpipe":
            orders.append([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
            continue
        warmup = min(p - s, m)
        ops = [("F", i) for i in range(warmup)]
        for i in range(m - warmup):
            ops += [("F", warmup + i), ("B", i)]
        orders.append(ops + [("B", i) for i in range(m - warmup, m)])
    return orders
