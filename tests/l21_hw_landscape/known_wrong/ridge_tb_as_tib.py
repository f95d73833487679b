"""TB/s read as TiB/s (2**40 bytes) while TFLOP/s stays decimal: every ridge 9 % too low."""

MODULE = "landscape"
REJECTED_BY = {"ridge_points": ["correctness"]}


def ridge_points(table):
    return {name: peak * 10**12 / (bw * 2**40) for name, (peak, bw) in _check_table(table).items()}
