"""Classic misconception: iowait is CPU work, so busy = 100 - idle (11.8 % on the stuck node instead of 1.8 %)."""

MODULE = "linux_tools"
REJECTED_BY = {"cpu_breakdown": ["correctness"], "use_triage": ["correctness"]}

_correct_cpu_breakdown = cpu_breakdown


def cpu_breakdown(stat_before, stat_after, cpu="cpu"):
    out = _correct_cpu_breakdown(stat_before, stat_after, cpu)
    out["busy"] = 100.0 - out["idle"]
    return out
