"""Float trap: burns compared in floats: exactly 14.4, 6 and 1 land just below their thresholds and never fire."""

MODULE = "slo"
REJECTED_BY = {"burn_rate_alerts": ["correctness"]}


def burn_rate_alerts(windows, slo_target):
    counts = _check_windows(windows)
    _check_slo(slo_target)
    burn = {w: (b / n) / (1 - slo_target) if n else 0.0 for w, (b, n) in counts.items()}
    return [name for name, long, short, th in RULES if burn[long] >= float(th) and burn[short] >= float(th)]
