"""Another correct breakdown: every cpu* line into a dict of named counters first, then the deltas by name."""

MODULE = "linux_tools"
ACCEPTED = ["cpu_breakdown", "use_triage"]


def _snapshot(name, text, cpu):
    table = {}
    for line in text.splitlines():
        words = line.split()
        if not words or not words[0].startswith("cpu"):
            continue
        if words[0] == cpu and cpu in table:
            raise ValueError(f"cpu: {name} has two {cpu!r} lines")
        table[words[0]] = words[1:]
    if cpu not in table:
        raise ValueError(f"cpu: {name} has no {cpu!r} line")
    values = table[cpu]
    if len(values) < 4 or not all(_COUNT.match(v) for v in values):
        raise ValueError(f"{name}: cannot read the {cpu} line")
    return dict(zip(STAT_FIELDS, [int(v) for v in values], strict=False)) | {f: 0 for f in STAT_FIELDS[len(values):]}


def cpu_breakdown(stat_before, stat_after, cpu="cpu"):
    before, after = _check_text("stat_before", stat_before), _check_text("stat_after", stat_after)
    if not isinstance(cpu, str) or not re.fullmatch(r"cpu\d*", cpu):
        raise ValueError(f"cpu must be 'cpu' or 'cpuN', got {cpu!r}")
    a, b = _snapshot("stat_before", before, cpu), _snapshot("stat_after", after, cpu)
    delta = {f: b[f] - a[f] for f in STAT_FIELDS}
    if min(delta.values()) < 0:
        raise ValueError("stat_after: a counter went down")
    total = sum(delta[f] for f in TIME_FIELDS)
    if not total:
        raise ValueError("stat_after: no jiffies passed")
    out = {f: delta[f] * 100.0 / total for f in TIME_FIELDS}
    out["busy"] = (total - delta["idle"] - delta["iowait"]) * 100.0 / total
    out["total_jiffies"] = total
    return out
