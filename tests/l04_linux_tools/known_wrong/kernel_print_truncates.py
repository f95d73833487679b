"""Bug: prints the raw value without adding FIXED_1/200 first, so 2 decimals are truncated, not rounded."""

MODULE = "linux_tools"
REJECTED_BY = {"kernel_loadavg": ["correctness"]}


def kernel_loadavg(active_counts, exp=EXP_1, start_raw=0):
    counts = _check_counts("active_counts", active_counts)
    e, raw = check_int("exp", exp, 1), check_int("start_raw", start_raw)
    if e >= FIXED_1:
        raise ValueError(f"exp must be < {FIXED_1}")
    for n in counts:
        active = n * FIXED_1
        raw = (raw * e + active * (FIXED_1 - e) + (FIXED_1 - 1 if active >= raw else 0)) // FIXED_1
    return f"{raw >> FSHIFT}.{((raw & (FIXED_1 - 1)) * 100) >> FSHIFT:02d}"
