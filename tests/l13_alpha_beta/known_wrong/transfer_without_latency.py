"""Classic bug: time = S/β only; the start-up latency α is forgotten (small messages look free)."""

MODULE = "alpha_beta"
REJECTED_BY = {"transfer_time": ["correctness"]}


def transfer_time(message_bytes, alpha_s, beta_bytes_per_s):
    s = _check_bytes("message_bytes", message_bytes)
    _check_real("alpha_s", alpha_s, allow_zero=True)
    return s / _check_real("beta_bytes_per_s", beta_bytes_per_s)
