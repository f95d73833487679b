"""Correct alternative: TPOT as the mean of the ITL gaps; nearest rank by counting instead of indexing."""

MODULE = "inference"
ACCEPTED = ["request_metrics", "percentile_nearest_rank"]

_correct_metrics = request_metrics


def request_metrics(arrival_s, token_times_s):
    out = _correct_metrics(arrival_s, token_times_s)
    gaps = [b - a for a, b in zip(token_times_s, token_times_s[1:], strict=False)]
    out["itl"] = gaps
    out["tpot"] = sum(gaps) / len(gaps) if gaps else 0.0
    return out


def percentile_nearest_rank(values, q):
    if not isinstance(values, list | tuple) or not values:
        raise ValueError(f"values must be a non-empty sequence, got {values!r}")
    q = _check_real("q", q)
    if not 0 < q <= 100:
        raise ValueError(f"q must be in (0, 100], got {q}")
    for v in sorted(set(values)):  # smallest v with at least q % of the values <= v
        if 100 * sum(1 for x in values if x <= v) >= Fraction(str(q)) * len(values):
            return v
    return max(values)
