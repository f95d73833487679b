"""Contract break: the gates of the kept choices renormalised to sum to 1 after a drop (this unit follows
GShard/DeepSpeed, where a dropped choice's share is simply lost)."""

MODULE = "moe"
REJECTED_BY = {"moe_combine": ["correctness"]}


def moe_combine(x, experts, gates, kept, expert_scale):
    out = []
    for t, row in enumerate(x):
        total = sum(g for g, keep in zip(gates[t], kept[t], strict=True) if keep) or 1.0
        y = [0.0] * len(row)
        for j, e in enumerate(experts[t]):
            if kept[t][j]:
                for d, v in enumerate(row):
                    y[d] += v * expert_scale[e] * gates[t][j] / total
        out.append(y)
    return out
