"""Course erratum #6: the two definitions confused: Megatron's bubble/ideal ratio returned as the time fraction."""

MODULE = "parallel"
REJECTED_BY = {"pipeline_bubble_ratio": ["correctness"]}


def pipeline_bubble_ratio(p, m, v=1):
    return pipeline_bubble_time_fraction(p, m, v)
