"""Classic bug: interleaving ignored: v virtual stages do not shrink the bubble."""

MODULE = "parallel"
REJECTED_BY = {"pipeline_bubble_time_fraction": ["correctness"], "pipeline_bubble_ratio": ["correctness"]}

_correct_fraction, _correct_ratio = pipeline_bubble_time_fraction, pipeline_bubble_ratio


def pipeline_bubble_time_fraction(p, m, v=1):
    _check_pipeline(p, m, v)
    return _correct_fraction(p, m, 1)


def pipeline_bubble_ratio(p, m, v=1):
    _check_pipeline(p, m, v)
    return _correct_ratio(p, m, 1)
