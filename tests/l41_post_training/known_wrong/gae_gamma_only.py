"""Classic bug: the GAE recursion discounts by γ instead of γλ (λ ignored: Monte-Carlo-like, high variance)."""

MODULE = "post_training"
REJECTED_BY = {"gae_advantages": ["correctness"]}

_correct_gae = gae_advantages


def gae_advantages(rewards, values, gamma, lam):
    _correct_gae(rewards, values, gamma, lam)
    return _correct_gae(rewards, values, gamma, 1.0)
