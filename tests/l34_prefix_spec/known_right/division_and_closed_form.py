"""Another correct way: accept with u < min(1, p/q) on exact rationals (a division), the closed form
(1 − α^{γ+1})/(1 − α) with α = 1 handled apart, and the output law computed as min(p, q) + (p − q)₊ directly."""

MODULE = "spec_decode"
ACCEPTED = ["verify_step", "expected_tokens_per_round", "output_distribution", "accept_probability"]


def accept_probability(p, q):
    pp, qq = _pair(p, q)
    return 1 - sum(max(a - b, 0) for a, b in zip(pp, qq, strict=True))


def verify_step(p, q, draft_token, u, u_resample):
    pp, qq = _pair(p, q)
    x = check_int("draft_token", draft_token)
    if x >= len(pp) or qq[x] == 0:
        raise ValueError(f"draft_token {x} cannot have been drafted (q = 0)")
    check_uniform("u", u)
    check_uniform("u_resample", u_resample)
    if Fraction(u) < min(Fraction(1), Fraction(pp[x]) / Fraction(qq[x])):
        return True, x
    return False, inverse_cdf([max(a - b, 0) for a, b in zip(pp, qq, strict=True)], u_resample)


def expected_tokens_per_round(alpha, gamma):
    a = _check_alpha(alpha)
    g = check_int("gamma", gamma)
    return float(g + 1) if a == 1 else (1 - a ** (g + 1)) / (1 - a)


def output_distribution(p, q):
    pp, qq = _pair(p, q)
    return [min(a, b) + max(a - b, 0) for a, b in zip(pp, qq, strict=True)]
