"""Classic bug: no argument checks in speculative decoding: distributions that do not sum to 1, u = 1.0, a draft
token the draft gives probability 0, α above 1 come back as answers."""

MODULE = "spec_decode"
REJECTED_BY = {"residual_distribution": ["correctness"], "verify_step": ["correctness"],
               "speculative_round": ["correctness"], "spec_speedup": ["correctness"]}


def check_distribution(name, dist, length=None):
    return list(dist)


def check_uniform(name, u):
    return u


def _check_alpha(alpha):
    return alpha


def residual_distribution(p, q):
    over = [max(a - b, 0) for a, b in zip(p, q, strict=False)]
    total = sum(over) or 1
    return [w / total for w in over]


def verify_step(p, q, draft_token, u, u_resample):
    x = draft_token
    if x < len(q) and q[x] and u * q[x] < p[x]:
        return True, x
    return False, inverse_cdf([max(a - b, 0) for a, b in zip(p, q, strict=False)] or [1], min(u_resample, 0.999))


def speculative_round(target, draft, draft_tokens, u, u_resample):
    out = []
    for i, x in enumerate(draft_tokens):
        ok, token = verify_step(target[i], draft[i], x, u[i] if i < len(u) else 0.0, u_resample[i])
        out.append(token)
        if not ok:
            return out
    return [*out, inverse_cdf(list(target[-1]), u_resample[-1] if u_resample else 0.0)]


def spec_speedup(alpha, gamma, t_draft_s, t_target_s):
    e = float(sum(alpha**k for k in range(max(gamma, 0) + 1)))
    round_s = gamma * t_draft_s + t_target_s
    return {"tokens_per_round": e, "round_s": round_s, "tpot_s": round_s / e,
            "speedup": t_target_s / (round_s / e) if round_s else 0.0}
