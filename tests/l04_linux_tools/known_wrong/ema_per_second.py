"""Classic bug: decays by e^(-1/window) per tick, as if the kernel sampled every second (it samples every 5 s)."""

MODULE = "linux_tools"
REJECTED_BY = {"loadavg_ema": ["correctness"]}


def loadavg_ema(active_counts, window_s=60, start=0.0):
    counts = _check_counts("active_counts", active_counts)
    window = check_int("window_s", window_s, 1)
    decay = math.exp(-1 / window)
    load = float(start)
    for n in counts:
        load = load * decay + n * (1.0 - decay)
    return load
