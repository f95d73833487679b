"""The simulator writes a checkpoint after the last segment too: one save too many per run."""

MODULE = "checkpoint"
REJECTED_BY = {"simulate_run": ["correctness"]}

_right_run = simulate_run


def simulate_run(work_s, interval_s, ckpt_s, restart_s, failure_times):
    # the same run with one more (empty-but-saved) segment's write: simulate the work, then add a save
    got = _right_run(work_s, interval_s, ckpt_s, restart_s, failure_times)
    return {**got, "wall_s": got["wall_s"] + ckpt_s, "ckpts": got["ckpts"] + 1}
