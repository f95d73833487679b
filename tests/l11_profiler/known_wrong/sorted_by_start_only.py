"""Events sorted by ts alone (file order breaks ties): a parent listed after its child nests under it."""

MODULE = "profiler"
REJECTED_BY = {"self_time_by_op": ["correctness"]}


def self_time_by_op(trace, cat="cpu_op"):
    if not isinstance(cat, str) or not cat:
        raise ValueError(f"cat must be a non-empty str, got {cat!r}")
    threads = {}
    for e in complete_events(trace, (cat,)):
        threads.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    out = {}
    for thread in threads.values():
        thread.sort(key=lambda e: e["ts"])
        stack = []
        for e in thread:
            while stack and stack[-1][0] <= e["ts"]:
                stack.pop()
            out[e["name"]] = out.get(e["name"], 0.0) + e["dur"]
            if stack:
                out[stack[-1][1]] -= e["dur"]
            stack.append((e["ts"] + e["dur"], e["name"]))
    return out
