"""Classic bug: no argument checks: unknown algorithms, rank 0, γ = 1.5 or a ragged batch come back as numbers."""

MODULE = "post_training"
REJECTED_BY = {
    "rlhf_static_bytes": ["correctness"],
    "lora_params": ["correctness"],
    "gae_advantages": ["correctness"],
    "grpo_advantages": ["correctness"],
}


def rlhf_static_bytes(n_params, algorithm, frozen_reference=True):
    parts = {"actor": 16 * n_params}
    if algorithm == "ppo":
        parts.update(critic=16 * n_params, reward=2 * n_params)
    if algorithm != "sft" and frozen_reference:
        parts["reference"] = 2 * n_params
    parts["total"] = sum(parts.values())
    return parts


def lora_params(n_layers, target_shapes, rank):
    return n_layers * sum(rank * sum(shape) for shape in target_shapes)


def gae_advantages(rewards, values, gamma, lam):
    values = list(values) + [0.0] * (len(rewards) + 1 - len(values))
    out, running = [0.0] * len(rewards), 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * values[t + 1] - values[t] + gamma * lam * running
        out[t] = running
    return out


def grpo_advantages(rewards, group_size, eps=1e-6):
    g = max(int(group_size), 1)
    out = []
    for start in range(0, len(rewards), g):
        group = rewards[start : start + g]
        mean = sum(group) / len(group)
        std = math.sqrt(sum((x - mean) ** 2 for x in group) / len(group))
        out += [0.0 if std + eps == 0 else (x - mean) / (std + eps) for x in group]
    return out
