"""Classic bug: normalized over the whole batch instead of within each prompt's group."""

MODULE = "post_training"
REJECTED_BY = {"grpo_advantages": ["correctness"]}

_correct_grpo = grpo_advantages


def grpo_advantages(rewards, group_size, eps=1e-6):
    _correct_grpo(rewards, group_size, eps)
    return _correct_grpo(rewards, len(rewards), eps)
