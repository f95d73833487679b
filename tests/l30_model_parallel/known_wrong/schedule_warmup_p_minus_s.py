"""Classic bug: warm-up of p−s forwards instead of p−s−1: one micro-batch too many in flight."""

MODULE = "parallel"
REJECTED_BY = {"one_f_one_b_schedule": ["correctness"]}


def one_f_one_b_schedule(p, m, stage):
    p, m, stage = check_int("p", p, 1), check_int("m", m, 1), check_int("stage", stage)
    if stage >= p:
        raise ValueError(f"stage must be < p = {p}, got {stage}")
    warmup = min(p - stage, m)
    schedule = [("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        schedule += [("F", warmup + i), ("B", i)]
    return schedule + [("B", i) for i in range(m - warmup, m)]
