"""Doubles for the multiply-add although flops_per_cycle already counts FLOPs: 1979 T for an H100."""

MODULE = "landscape"
REJECTED_BY = {"peak_flops": ["correctness"]}


def peak_flops(units, flops_per_cycle, clock_hz):
    n = check_int("units", units, 1)
    per_cycle = check_int("flops_per_cycle", flops_per_cycle, 1)
    return float(2 * n * per_cycle * _check_real("clock_hz", clock_hz))
