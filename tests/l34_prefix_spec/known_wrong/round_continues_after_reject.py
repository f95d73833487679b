"""Classic bug: verification continues past a rejection: drafts conditioned on a token that was replaced are
still accepted."""

MODULE = "spec_decode"
REJECTED_BY = {"speculative_round": ["correctness"]}


def speculative_round(target, draft, draft_tokens, u, u_resample):
    gamma = len(draft_tokens)
    if len(target) != gamma + 1 or len(draft) != gamma or len(u) != gamma or len(u_resample) != gamma + 1:
        raise ValueError("target, draft, u, u_resample have the wrong lengths")
    out, all_ok = [], True
    for i, x in enumerate(draft_tokens):
        ok, token = verify_step(target[i], draft[i], x, u[i], u_resample[i])
        out.append(token)
        all_ok = all_ok and ok
    if all_ok:
        out.append(inverse_cdf(list(target[gamma]), u_resample[gamma]))
    return out
