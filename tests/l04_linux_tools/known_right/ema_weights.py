"""Another correct load average: the unrolled weighted sum (start·d^k + Σ n_i·(1-d)·d^(k-1-i)), and the
kernel's fixed point with divmod for the printing."""

MODULE = "linux_tools"
ACCEPTED = ["loadavg_ema", "kernel_loadavg"]


def loadavg_ema(active_counts, window_s=60, start=0.0):
    counts = _check_counts("active_counts", active_counts)
    window = check_int("window_s", window_s, 1)
    if isinstance(start, bool) or not isinstance(start, int | float) or not math.isfinite(start) or start < 0:
        raise ValueError(f"start must be a finite load >= 0, got {start!r}")
    d, k = math.exp(-TICK_S / window), len(counts)
    return start * d**k + sum(n * (1 - d) * d ** (k - 1 - i) for i, n in enumerate(counts))


def kernel_loadavg(active_counts, exp=EXP_1, start_raw=0):
    counts = _check_counts("active_counts", active_counts)
    e = check_int("exp", exp, 1)
    if e >= FIXED_1:
        raise ValueError(f"exp must be < {FIXED_1}, got {e}")
    load = check_int("start_raw", start_raw)
    for n in counts:
        active = n * FIXED_1
        bump = FIXED_1 - 1 if active >= load else 0
        load, _ = divmod(load * e + active * (FIXED_1 - e) + bump, FIXED_1)
    whole, frac = divmod(load + FIXED_1 // 200, FIXED_1)
    return f"{whole}.{frac * 100 // FIXED_1:02d}"
