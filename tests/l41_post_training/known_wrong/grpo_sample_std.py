"""Classic bug: sample standard deviation (divide by G − 1): [1, 0, 0, 1] gives ±0.866, not ±1."""

MODULE = "post_training"
REJECTED_BY = {"grpo_advantages": ["correctness"]}


def grpo_advantages(rewards, group_size, eps=1e-6):
    g = check_int("group_size", group_size, 1)
    r = _check_reals("rewards", rewards)
    if len(r) % g or eps < 0:
        raise ValueError("rewards must be a multiple of group_size and eps >= 0")
    out = []
    for start in range(0, len(r), g):
        group = r[start : start + g]
        mean = sum(group) / g
        std = math.sqrt(sum((x - mean) ** 2 for x in group) / max(g - 1, 1))
        out += [0.0 if std + eps == 0 else (x - mean) / (std + eps) for x in group]
    return out
