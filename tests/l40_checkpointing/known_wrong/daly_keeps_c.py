"""Daly's formula without the final − C, and without its τ = M branch for C >= 2M."""

MODULE = "checkpoint"
REJECTED_BY = {"optimal_interval": ["correctness"]}


def optimal_interval(ckpt_s, mtbf_s, method="young"):
    c = _check_real("ckpt_s", ckpt_s, positive=True)
    m = _check_real("mtbf_s", mtbf_s, positive=True)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    r = c / (2 * m)
    young = math.sqrt(2 * c * m)
    return young if method == "young" else young * (1 + math.sqrt(r) / 3 + r / 9)
