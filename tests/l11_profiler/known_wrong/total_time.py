"""Total (inclusive) time per name instead of self time: every nested op is counted again in its callers."""

MODULE = "profiler"
REJECTED_BY = {"self_time_by_op": ["correctness"]}


def self_time_by_op(trace, cat="cpu_op"):
    if not isinstance(cat, str) or not cat:
        raise ValueError(f"cat must be a non-empty str, got {cat!r}")
    out = {}
    for e in complete_events(trace, (cat,)):
        out[str(e.get("name"))] = out.get(str(e.get("name")), 0.0) + e["dur"]
    return out
