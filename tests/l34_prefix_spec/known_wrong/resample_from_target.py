"""Classic bug: after a rejection, sample the target p itself: the tokens the draft covers come out twice as often
as they should (output law min(p, q) + (1 − β)·p)."""

MODULE = "spec_decode"
REJECTED_BY = {"verify_step": ["correctness"], "speculative_round": ["correctness"]}

_verify_step = verify_step


def verify_step(p, q, draft_token, u, u_resample):
    accepted, token = _verify_step(p, q, draft_token, u, u_resample)
    return (True, token) if accepted else (False, inverse_cdf(list(p), u_resample))
