"""Classic bug: the steady state runs B before F (B(i) then F(warmup + i)) after the warm-up."""

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
        warmup = min(p - s - 1, m)
        ops = [("F", i) for i in range(warmup)]
        for i in range(m - warmup):
            ops += [("B", i), ("F", warmup + i)]
        orders.append(ops + [("B", i) for i in range(m - warmup, m)])
    return orders
