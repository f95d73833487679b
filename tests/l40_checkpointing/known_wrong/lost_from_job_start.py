"""A failure restarts the segment but charges lost work from the last write's start, not the segment's."""

MODULE = "checkpoint"
REJECTED_BY = {"simulate_run": ["correctness"]}

_right_run = simulate_run


def simulate_run(work_s, interval_s, ckpt_s, restart_s, failure_times):
    got = _right_run(work_s, interval_s, ckpt_s, restart_s, failure_times)
    extra = ckpt_s * got["failures"] if got["ckpts"] else 0.0  # wrong: the last save counted as lost work
    return {**got, "lost_s": got["lost_s"] + extra}
