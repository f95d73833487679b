"""Classic bug: no argument checks in pipeline_orders: an unknown kind silently gives GPipe, p = 0 gives no stages."""

MODULE = "pipeline"
REJECTED_BY = {"pipeline_orders": ["correctness"]}


def pipeline_orders(p, m, kind):
    if kind == "1f1b":
        return [[("F", i) for i in range(min(p - s - 1, m))]
                + [op for i in range(m - min(p - s - 1, m)) for op in (("F", min(p - s - 1, m) + i), ("B", i))]
                + [("B", i) for i in range(m - min(p - s - 1, m), m)] for s in range(int(p))]
    return [[("F", i) for i in range(int(m))] + [("B", i) for i in range(int(m))] for _ in range(int(p))]
