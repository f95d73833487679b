"""Mistake: each rule looks at its long window only: it keeps paging an hour after the errors stopped."""

MODULE = "slo"
REJECTED_BY = {"burn_rate_alerts": ["correctness"]}


def burn_rate_alerts(windows, slo_target):
    counts = _check_windows(windows)
    budget = 1 - _check_slo(slo_target)
    burn = {w: Fraction(b, n) / budget if n else Fraction(0) for w, (b, n) in counts.items()}
    return [name for name, long, _short, th in RULES if burn[long] >= th]
