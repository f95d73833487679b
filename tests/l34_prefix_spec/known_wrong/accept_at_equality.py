"""Off at the edge: accept iff u · q[x] <= p[x]. u is drawn from [0, 1), so the accept region must be
u < p/q: at u · q = p (the worked u = 0.5) the token is rejected."""

MODULE = "spec_decode"
REJECTED_BY = {"verify_step": ["correctness"]}


def verify_step(p, q, draft_token, u, u_resample):
    pp, qq = _pair(p, q)
    x = check_int("draft_token", draft_token)
    if x >= len(pp) or qq[x] == 0:
        raise ValueError(f"draft_token {x} has probability 0 under q")
    check_uniform("u", u)
    check_uniform("u_resample", u_resample)
    if Fraction(u) * Fraction(qq[x]) <= Fraction(pp[x]):
        return True, x
    return False, inverse_cdf([max(a - b, 0) for a, b in zip(pp, qq, strict=True)], u_resample)
