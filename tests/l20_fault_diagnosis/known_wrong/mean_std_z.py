"""The classic z-score (mean and standard deviation): the outlier inflates the deviation that judges it."""

MODULE = "diagnosis"
REJECTED_BY = {"robust_z": ["correctness"]}


def robust_z(values):
    xs = _check_reals("values", values)
    mean, sd = statistics.fmean(xs), statistics.pstdev(xs)
    if sd == 0:
        return [0.0] * len(xs)
    return [(x - mean) / sd for x in xs]
