"""Median as the upper middle value (no averaging of the two middles) and MAD 0 mapped to z 0."""

MODULE = "diagnosis"
REJECTED_BY = {"robust_z": ["correctness"]}


def robust_z(values):
    xs = _check_reals("values", values)
    med = sorted(xs)[len(xs) // 2]
    mad = sorted(abs(x - med) for x in xs)[len(xs) // 2]
    return [0.0 if mad == 0 else 0.6745 * (x - med) / mad for x in xs]
