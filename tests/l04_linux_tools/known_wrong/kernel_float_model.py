"""Classic bug: prints the float EMA ("80.91") instead of running the kernel's fixed point ("80.99")."""

MODULE = "linux_tools"
REJECTED_BY = {"kernel_loadavg": ["correctness"]}


def kernel_loadavg(active_counts, exp=EXP_1, start_raw=0):
    counts = _check_counts("active_counts", active_counts)
    e, raw = check_int("exp", exp, 1), check_int("start_raw", start_raw)
    if e >= FIXED_1:
        raise ValueError(f"exp must be < {FIXED_1}")
    load = raw / FIXED_1
    for n in counts:
        load = load * e / FIXED_1 + n * (1 - e / FIXED_1)
    return f"{load:.2f}"
