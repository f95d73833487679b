"""Classic bug: GPipe order (all forwards, then all backwards): same bubble, but m micro-batches in flight."""

MODULE = "parallel"
REJECTED_BY = {"one_f_one_b_schedule": ["correctness"]}

_correct_schedule = one_f_one_b_schedule


def one_f_one_b_schedule(p, m, stage):
    _correct_schedule(p, m, stage)  # validation
    return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
