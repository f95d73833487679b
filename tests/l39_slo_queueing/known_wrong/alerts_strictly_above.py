"""Mistake: a rule fires only strictly above its threshold; a burn of exactly 14.4 is already a page."""

MODULE = "slo"
REJECTED_BY = {"burn_rate_alerts": ["correctness"]}


def burn_rate_alerts(windows, slo_target):
    counts = _check_windows(windows)
    budget = 1 - _check_slo(slo_target)
    burn = {w: Fraction(b, n) / budget if n else Fraction(0) for w, (b, n) in counts.items()}
    return [name for name, long, short, th in RULES if burn[long] > th and burn[short] > th]
