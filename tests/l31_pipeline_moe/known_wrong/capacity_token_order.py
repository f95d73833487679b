"""Classic bug: capacity filled token by token (token 0's choices, then token 1's ...), so a late token's first
choice loses to an early token's second choice."""

MODULE = "moe"
REJECTED_BY = {"apply_capacity": ["correctness"]}


def apply_capacity(experts, n_experts, capacity_factor):
    e = check_int("n_experts", n_experts, 1)
    rows = _check_experts(experts, e)
    k = len(rows[0])
    capacity = expert_capacity(len(rows), e, k, capacity_factor)
    load = [0] * e
    kept = [[False] * k for _ in rows]
    for t, row in enumerate(rows):
        for j in range(k):
            if load[row[j]] < capacity:
                load[row[j]] += 1
                kept[t][j] = True
    return {"capacity": capacity, "kept": kept, "tokens_per_expert": load, "dropped": len(rows) * k - sum(load),
            "dropped_tokens": [t for t, row in enumerate(kept) if not any(row)]}
