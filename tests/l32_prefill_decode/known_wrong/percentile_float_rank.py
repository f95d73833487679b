"""Classic bug: rank = ceil(q/100 · N) in floats: P99.9 of 1000 values is 999.0000000000001 → the 1000th."""

MODULE = "inference"
REJECTED_BY = {"percentile_nearest_rank": ["correctness"]}

_correct_percentile = percentile_nearest_rank


def percentile_nearest_rank(values, q):
    _correct_percentile(values, q)
    return sorted(values)[math.ceil(q / 100 * len(values)) - 1]
