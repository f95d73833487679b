"""Classic bug: the last state's value is dropped (every trajectory treated as terminal)."""

MODULE = "post_training"
REJECTED_BY = {"gae_advantages": ["correctness"]}

_correct_gae = gae_advantages


def gae_advantages(rewards, values, gamma, lam):
    _correct_gae(rewards, values, gamma, lam)
    return _correct_gae(rewards, [*list(values)[:-1], 0.0], gamma, lam)
