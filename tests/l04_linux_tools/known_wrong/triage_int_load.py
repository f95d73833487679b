"""The lecture's health-check script: compares int(load1) with the CPU count, so 128.40 on 128 CPUs is "ok"."""

MODULE = "linux_tools"
REJECTED_BY = {"use_triage": ["correctness"]}

_correct_use_triage = use_triage


def use_triage(loadavg_text, stat_before, stat_after, ps_text, n_cpus):
    out = _correct_use_triage(loadavg_text, stat_before, stat_after, ps_text, n_cpus)
    if int(out["load1"]) <= n_cpus:
        out["verdict"] = "ok"
    return out
