"""Efficiency as 1 − save / compute: the save measured against the compute, not against the whole cycle."""

MODULE = "checkpoint"
REJECTED_BY = {"checkpoint_efficiency": ["correctness"]}


def checkpoint_efficiency(steps_between, step_s, save_s):
    check_int("steps_between", steps_between, 1)
    step_s, save_s = _check_real("step_s", step_s, positive=True), _check_real("save_s", save_s)
    return 1 - save_s / (steps_between * step_s)
