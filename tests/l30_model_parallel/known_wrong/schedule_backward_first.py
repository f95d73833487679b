"""Classic bug: the steady state runs the backward before the forward (B then F): the last stage deadlocks."""

MODULE = "parallel"
REJECTED_BY = {"one_f_one_b_schedule": ["correctness"]}


def one_f_one_b_schedule(p, m, stage):
    p, m, stage = check_int("p", p, 1), check_int("m", m, 1), check_int("stage", stage)
    if stage >= p:
        raise ValueError(f"stage must be < p = {p}, got {stage}")
    warmup = min(p - stage - 1, m)
    schedule = [("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        schedule += [("B", i), ("F", warmup + i)]
    return schedule + [("B", i) for i in range(m - warmup, m)]
