"""Float trap: (bad/total)/(1 − SLO) in floats: 144 of 10,000 at 99.9 % burns 14.399999999999986, under 14.4."""

MODULE = "slo"
REJECTED_BY = {"burn_rate": ["correctness"]}


def burn_rate(bad, total, slo_target):
    _check_counts(bad, total)
    _check_slo(slo_target)
    return (bad / total) / (1 - slo_target) if total else 0.0
