"""Mistake: reports the error ratio bad/total as the burn rate, forgetting to divide by the budget 1 − SLO."""

MODULE = "slo"
REJECTED_BY = {"burn_rate": ["correctness"]}


def burn_rate(bad, total, slo_target):
    _check_counts(bad, total)
    _check_slo(slo_target)
    return bad / total if total else 0.0
