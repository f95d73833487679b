"""Speed-up as the tokens per round alone, as if drafting cost nothing: round = t_target."""

MODULE = "spec_decode"
REJECTED_BY = {"spec_speedup": ["correctness"]}


def spec_speedup(alpha, gamma, t_draft_s, t_target_s):
    e = expected_tokens_per_round(alpha, gamma)
    return {"tokens_per_round": e, "round_s": t_target_s, "tpot_s": t_target_s / e, "speedup": e}
