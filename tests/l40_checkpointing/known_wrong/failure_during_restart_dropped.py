"""Failures that arrive during a restart are dropped instead of striking when the restart ends."""

MODULE = "checkpoint"
REJECTED_BY = {"simulate_run": ["correctness"]}

_right_run = simulate_run


def simulate_run(work_s, interval_s, ckpt_s, restart_s, failure_times):
    kept, busy_until = [], -1.0
    for t in sorted(_check_failures(failure_times)):
        if t < busy_until:
            continue  # wrong: a node that fails during the restart is still broken afterwards
        kept.append(t)
        busy_until = t + restart_s
    return _right_run(work_s, interval_s, ckpt_s, restart_s, kept)
