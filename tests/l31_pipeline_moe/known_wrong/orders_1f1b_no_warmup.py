"""Classic bug: 1F1B without warm-up: every stage alternates F0 B0 F1 B1 ..., so stage 0 waits a full round trip
for each micro-batch (one in flight, the pipeline never fills)."""

MODULE = "pipeline"
REJECTED_BY = {"pipeline_orders": ["correctness"]}


def pipeline_orders(p, m, kind):
    p, m = check_int("p", p, 1), check_int("m", m, 1)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "gpipe":
        return [[("F", i) for i in range(m)] + [("B", i) for i in range(m)] for _ in range(p)]
    return [[op for i in range(m) for op in (("F", i), ("B", i))] for _ in range(p)]
