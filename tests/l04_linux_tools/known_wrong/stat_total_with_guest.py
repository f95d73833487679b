"""Classic bug: the total sums all ten columns, so guest time (already inside user) is counted twice."""

MODULE = "linux_tools"
REJECTED_BY = {"cpu_breakdown": ["correctness"], "use_triage": ["correctness"]}


def cpu_breakdown(stat_before, stat_after, cpu="cpu"):
    before, after = _check_text("stat_before", stat_before), _check_text("stat_after", stat_after)
    if not isinstance(cpu, str) or not re.fullmatch(r"cpu\d*", cpu):
        raise ValueError(f"cpu must be 'cpu' or 'cpuN', got {cpu!r}")
    old, new = _stat_columns("stat_before", before, cpu), _stat_columns("stat_after", after, cpu)
    delta = [b - a for a, b in zip(old, new, strict=True)]
    if any(d < 0 for d in delta):
        raise ValueError("stat_after: counters went down")
    total = sum(delta)
    if total == 0:
        raise ValueError("stat_after: no jiffies passed")
    out = {name: 100.0 * d / total for name, d in zip(TIME_FIELDS, delta, strict=False)}
    out["busy"] = 100.0 * (total - delta[3] - delta[4]) / total
    out["total_jiffies"] = total
    return out
