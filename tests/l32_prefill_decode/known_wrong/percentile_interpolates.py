"""Classic bug: linear interpolation between ranks (numpy's default), not the nearest rank the SLO report asks for."""

MODULE = "inference"
REJECTED_BY = {"percentile_nearest_rank": ["correctness"]}

_correct_percentile = percentile_nearest_rank


def percentile_nearest_rank(values, q):
    _correct_percentile(values, q)
    ordered = sorted(values)
    pos = q / 100 * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
