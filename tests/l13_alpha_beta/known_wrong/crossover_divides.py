"""Classic bug: crossover α/β instead of α·β (units: seconds per byte per second are not bytes)."""

MODULE = "alpha_beta"
REJECTED_BY = {"crossover_bytes": ["correctness"]}


def crossover_bytes(alpha_s, beta_bytes_per_s):
    return _check_real("alpha_s", alpha_s, allow_zero=True) / _check_real("beta_bytes_per_s", beta_bytes_per_s)
