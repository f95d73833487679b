"""Classic misconception: "the 1-minute load is the mean of the last minute's samples" (a sliding window)."""

MODULE = "linux_tools"
REJECTED_BY = {"loadavg_ema": ["correctness"]}


def loadavg_ema(active_counts, window_s=60, start=0.0):
    counts = _check_counts("active_counts", active_counts)
    window = check_int("window_s", window_s, 1)
    last = counts[-max(1, window // TICK_S):]
    return float(sum(last)) / len(last) if last else float(start)
