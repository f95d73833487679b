"""calc_load before Linux 4.6: no round-up when the load rises, so a steady load stalls below n (127.99)."""

MODULE = "linux_tools"
REJECTED_BY = {"kernel_loadavg": ["correctness"]}


def kernel_loadavg(active_counts, exp=EXP_1, start_raw=0):
    counts = _check_counts("active_counts", active_counts)
    e, raw = check_int("exp", exp, 1), check_int("start_raw", start_raw)
    if e >= FIXED_1:
        raise ValueError(f"exp must be < {FIXED_1}")
    for n in counts:
        raw = (raw * e + n * FIXED_1 * (FIXED_1 - e)) // FIXED_1
    x = raw + FIXED_1 // 200
    return f"{x >> FSHIFT}.{((x & (FIXED_1 - 1)) * 100) >> FSHIFT:02d}"
