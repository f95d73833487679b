"""Correct alternative: GAE as Σ (γλ)^l δ_{t+l} for each t (the definition); GRPO via the statistics module."""

MODULE = "post_training"
ACCEPTED = ["gae_advantages", "grpo_advantages"]

import statistics


def gae_advantages(rewards, values, gamma, lam):
    r = _check_reals("rewards", rewards)
    v = _check_reals("values", values, len(r) + 1)
    gamma, lam = _check_unit_interval("gamma", gamma), _check_unit_interval("lam", lam)
    deltas = [r[t] + gamma * v[t + 1] - v[t] for t in range(len(r))]
    return [sum((gamma * lam) ** k * d for k, d in enumerate(deltas[t:])) for t in range(len(r))]


def grpo_advantages(rewards, group_size, eps=1e-6):
    g = check_int("group_size", group_size, 1)
    r = _check_reals("rewards", rewards)
    if len(r) % g:
        raise ValueError(f"rewards: {len(r)} values are not whole groups of group_size = {g}")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 <= eps < math.inf:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    out = []
    for group in (r[i : i + g] for i in range(0, len(r), g)):
        mean, std = statistics.fmean(group), statistics.pstdev(group)
        out += [0.0 if std + eps == 0 else (x - mean) / (std + eps) for x in group]
    return out
