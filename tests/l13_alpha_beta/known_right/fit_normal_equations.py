"""Correct alternative: the least-squares line from the normal equations (running sums, no means)."""

MODULE = "alpha_beta"
ACCEPTED = ["fit_alpha_beta"]


def fit_alpha_beta(sizes, times):
    if len(sizes) != len(times):
        raise ValueError("sizes and times must have the same length")
    xs = [float(_check_bytes("sizes", s)) for s in sizes]
    ys = [_check_real("times", t, allow_zero=True) for t in times]
    if len(set(xs)) < 2:
        raise ValueError("sizes must hold at least two distinct message sizes")
    n, sx, sy = len(xs), math.fsum(xs), math.fsum(ys)
    sxx, sxy = math.fsum(x * x for x in xs), math.fsum(x * y for x, y in zip(xs, ys, strict=True))
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    if slope <= 0:
        raise ValueError("times must grow with sizes: the fitted slope 1/β is not positive")
    return (sy - slope * sx) / n, 1.0 / slope
