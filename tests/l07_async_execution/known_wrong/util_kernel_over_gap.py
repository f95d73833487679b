"""Utilization as kernel time over the gap (1.5 / 6.5 = 0.23) instead of over the whole period."""

MODULE = "async_exec"
REJECTED_BY = {"launch_bound_utilization": ["correctness"]}


def launch_bound_utilization(kernel_us, gap_us):
    k = _check_real("kernel_us", kernel_us, positive=True)
    g = _check_real("gap_us", gap_us, positive=False)
    return k / g if g else 1.0
