"""Classic bug: a dropped choice passes x through with its gate (the residual counted inside the combine, so the
layer's residual add would count x twice)."""

MODULE = "moe"
REJECTED_BY = {"moe_combine": ["correctness"]}


def moe_combine(x, experts, gates, kept, expert_scale):
    out = []
    for t, row in enumerate(x):
        y = [0.0] * len(row)
        for j, e in enumerate(experts[t]):
            factor = expert_scale[e] if kept[t][j] else 1.0
            for d, v in enumerate(row):
                y[d] += v * factor * gates[t][j]
        out.append(y)
    return out
