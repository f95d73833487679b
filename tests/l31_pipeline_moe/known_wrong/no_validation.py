"""Classic bug: no argument checks: k > E, a capacity factor of 0, ragged rows or bad ranks come back as numbers
(or as an IndexError deep inside)."""

MODULE = "moe"
REJECTED_BY = {
    "topk_route": ["correctness"],
    "expert_capacity": ["correctness"],
    "apply_capacity": ["correctness"],
    "moe_combine": ["correctness"],
    "all_to_all_bytes": ["correctness"],
}


def topk_route(logits, k):
    experts = [sorted(range(len(r)), key=lambda e: (-r[e], e))[:k] for r in logits]
    gates = []
    for r, top in zip(logits, experts, strict=False):
        w = [math.exp(r[e] - r[top[0]]) for e in top] if top else []
        gates.append([v / sum(w) for v in w])
    return experts, gates


def expert_capacity(n_tokens, n_experts, k, capacity_factor):
    return math.ceil(Fraction(str(capacity_factor)) * k * n_tokens / max(n_experts, 1))


def apply_capacity(experts, n_experts, capacity_factor):
    k = len(experts[0]) if experts else 0
    c = expert_capacity(len(experts), n_experts, k, capacity_factor)
    load, kept = {}, [[False] * len(r) for r in experts]
    for j in range(k):
        for t, row in enumerate(experts):
            if j < len(row) and load.get(row[j], 0) < c:
                load[row[j]] = load.get(row[j], 0) + 1
                kept[t][j] = True
    return {"capacity": c, "kept": kept, "tokens_per_expert": [load.get(e, 0) for e in range(max(n_experts, 0))],
            "dropped": sum(len(r) for r in experts) - sum(load.values()),
            "dropped_tokens": [t for t, r in enumerate(kept) if not any(r)]}


def moe_combine(x, experts, gates, kept, expert_scale):
    n = max(len(expert_scale), 1)
    rows = zip(x, experts, gates, kept, strict=False)
    return [[sum(v * expert_scale[e % n] * g for e, g, keep in zip(ex, gs, kp, strict=False) if keep)
             if expert_scale else 0.0 for v in row] for row, ex, gs, kp in rows]


def all_to_all_bytes(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes):
    n = max(n_ranks, 1)
    dispatch = [[0] * n for _ in range(n)]
    for src, row, kp in zip(token_rank, experts, kept, strict=False):
        for e, keep in zip(row, kp, strict=False):
            dst = (e // max(experts_per_rank, 1)) % n
            if keep and dst != src % n:
                dispatch[src % n][dst] += hidden * elem_bytes
    combine = [[dispatch[d][s] for d in range(n)] for s in range(n)]
    return {"dispatch": dispatch, "combine": combine, "sent": [sum(dispatch[r]) + sum(combine[r]) for r in range(n)]}
