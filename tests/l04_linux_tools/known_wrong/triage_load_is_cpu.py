"""Classic misconception: a load above the CPU count means the CPUs are saturated (D tasks ignored)."""

MODULE = "linux_tools"
REJECTED_BY = {"use_triage": ["correctness"]}

_correct_use_triage = use_triage


def use_triage(loadavg_text, stat_before, stat_after, ps_text, n_cpus):
    out = _correct_use_triage(loadavg_text, stat_before, stat_after, ps_text, n_cpus)
    out["verdict"] = "cpu_saturated" if out["load1"] > n_cpus else "ok"
    return out
