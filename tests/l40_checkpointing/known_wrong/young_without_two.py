"""Young's interval as √(C·M): the factor 2 (a failure loses half an interval on average) dropped."""

MODULE = "checkpoint"
REJECTED_BY = {"optimal_interval": ["correctness"]}

_right_interval = optimal_interval


def optimal_interval(ckpt_s, mtbf_s, method="young"):
    if method == "young":
        return math.sqrt(_check_real("ckpt_s", ckpt_s, positive=True) * _check_real("mtbf_s", mtbf_s, positive=True))
    return _right_interval(ckpt_s, mtbf_s, method)
