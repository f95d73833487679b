"""Correct alternatives: Amdahl in fractions of the step, a sweep line over start/end marks for the unions,
latencies matched through a sort by correlation ID, and self time by recursion over each thread's call tree."""

MODULE = "profiler"
ACCEPTED = ["amdahl", "gpu_time_breakdown", "launch_latency", "self_time_by_op"]

_check_amdahl = _check_real


def amdahl(total_s, part_s, part_new_s):
    total = _check_amdahl("total_s", total_s, positive=True)
    part, new = _check_amdahl("part_s", part_s), _check_amdahl("part_new_s", part_new_s)
    if part > total:
        raise ValueError(f"part_s must be <= total_s, got {part_s!r} > {total_s!r}")
    f, s = part / total, new / part if part else 0.0  # the part's share of the step, and its new/old ratio
    new_total = total * ((1 - f) + f * s) if part else total + new
    return {"new_total_s": new_total, "speedup": total / new_total if new_total else math.inf,
            "time_saved_fraction": (total - new_total) / total, "max_speedup": 1 / (1 - f) if f < 1 else math.inf}


_right_breakdown_checks = gpu_time_breakdown


def _sweep(intervals):
    marks = sorted([(a, 1) for a, b in intervals] + [(b, -1) for a, b in intervals], key=lambda m: (m[0], -m[1]))
    total, depth, since = 0.0, 0, 0.0
    for t, d in marks:
        if depth == 0 and d == 1:
            since = t
        depth += d
        if depth == 0:
            total += t - since
    return total


def gpu_time_breakdown(trace, step=None):
    out = _right_breakdown_checks(trace, step)  # window and argument checks; every union recomputed below
    work = complete_events(trace, GPU_CATS)
    if step is None:
        lo = min(e["ts"] for e in work)
    else:
        lo = min(e["ts"] for e in complete_events(trace, ("user_annotation",)) if e.get("name") == step)
    hi = lo + out["window_us"]
    spans = {"compute_us": [], "nccl_us": [], "memcpy_us": [], "memset_us": []}
    for e in work:
        a, b = max(lo, e["ts"]), min(hi, e["ts"] + e["dur"])
        if b > a:
            kind = {"gpu_memcpy": "memcpy_us", "gpu_memset": "memset_us"}.get(e["cat"])
            spans[kind or ("nccl_us" if "nccl" in str(e.get("name")).lower() else "compute_us")].append((a, b))
    busy = _sweep([iv for ivs in spans.values() for iv in ivs])
    window = out["window_us"]
    return {"window_us": window, "busy_us": busy, "idle_us": window - busy,
            "idle_pct": 100.0 * (window - busy) / window if window else 0.0,
            **{k: _sweep(v) for k, v in spans.items()}}


def launch_latency(trace):
    launches = [(correlation(e), 0, e["ts"]) for e in complete_events(trace, ("cuda_runtime",))
                if e.get("name") in LAUNCH_NAMES and correlation(e) is not None]
    work = [(correlation(e), 1, e["ts"]) for e in complete_events(trace, GPU_CATS)]
    keyed = sorted(launches + work, key=lambda r: (str(type(r[0])), str(r[0]), r[1]))
    latencies, unmatched, last = [], 0, None
    for key, kind, ts in keyed:
        if kind == 0:
            last = (key, ts) if last is None or last[0] != key else last
        elif key is not None and last is not None and last[0] == key:
            latencies.append(ts - last[1])
        else:
            unmatched += 1
    latencies.sort()
    n = len(latencies)
    pick = {p: float(latencies[math.ceil(p * n / 100) - 1]) if n else 0.0 for p in (50, 90, 100)}
    return {"n": n, "p50_us": pick[50], "p90_us": pick[90], "max_us": pick[100], "unmatched_gpu": unmatched}


def self_time_by_op(trace, cat="cpu_op"):
    if not isinstance(cat, str) or not cat:
        raise ValueError(f"cat must be an event category (a non-empty str), got {cat!r}")
    threads = {}
    for e in complete_events(trace, (cat,)):
        threads.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    out = {}

    def visit(events, i, end):
        """Charge events[i:] that start before ``end`` as siblings; return the index after them and their total."""
        spent = 0.0
        while i < len(events) and events[i]["ts"] < end:
            e = events[i]
            i, inner = visit(events, i + 1, e["ts"] + e["dur"])
            out[e["name"]] = out.get(e["name"], 0.0) + e["dur"] - inner
            spent += e["dur"]
        return i, spent

    for events in threads.values():
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
        visit(events, 0, math.inf)
    return out
