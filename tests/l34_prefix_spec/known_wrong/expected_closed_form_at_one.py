"""The lecture's closed form (1 − α^{γ+1})/(1 − α) taken literally: ZeroDivisionError at α = 1 (all accepted)."""

MODULE = "spec_decode"
REJECTED_BY = {"expected_tokens_per_round": ["correctness"], "spec_speedup": ["correctness"]}


def expected_tokens_per_round(alpha, gamma):
    a = _check_alpha(alpha)
    g = check_int("gamma", gamma)
    return (1 - a ** (g + 1)) / (1 - a)
