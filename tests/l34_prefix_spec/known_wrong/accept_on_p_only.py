"""Classic bug: accept iff u < p[x], forgetting the draft's own probability q[x] (u < p/q)."""

MODULE = "spec_decode"
REJECTED_BY = {"verify_step": ["correctness"], "speculative_round": ["correctness"]}


def verify_step(p, q, draft_token, u, u_resample):
    pp, qq = _pair(p, q)
    x = check_int("draft_token", draft_token)
    if x >= len(pp) or qq[x] == 0:
        raise ValueError(f"draft_token {x} has probability 0 under q")
    check_uniform("u", u)
    check_uniform("u_resample", u_resample)
    if u < pp[x]:
        return True, x
    return False, inverse_cdf([max(a - b, 0) for a, b in zip(pp, qq, strict=True)], u_resample)
