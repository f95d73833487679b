"""Classic bug: reads only the second snapshot, i.e. the averages since boot, not the interval's."""

MODULE = "linux_tools"
REJECTED_BY = {"cpu_breakdown": ["correctness"], "use_triage": ["correctness"]}

_correct_cpu_breakdown = cpu_breakdown


def cpu_breakdown(stat_before, stat_after, cpu="cpu"):
    _correct_cpu_breakdown(stat_before, stat_after, cpu)  # same checks
    zero = "\n".join(f"{line.split()[0]} " + " ".join("0" for _ in line.split()[1:])
                     for line in stat_after.splitlines() if line.split())
    return _correct_cpu_breakdown(zero, stat_after, cpu)
