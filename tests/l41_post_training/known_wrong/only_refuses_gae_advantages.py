"""Refuses everything: a ValueError naming every parameter, whatever the arguments (it passes the bad-argument
table on its own; its points count only once its values are right, grader.core.failures.gate)."""

MODULE = "post_training"
REJECTED_BY = {"gae_advantages": ["correctness"]}


def gae_advantages(rewards, values, gamma, lam):
    raise ValueError("rewards, values, gamma or lam is invalid")
