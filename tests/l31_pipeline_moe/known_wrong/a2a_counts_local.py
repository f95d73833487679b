"""Classic bug (the lab's own count): every assignment crosses the network, including those whose expert is on the
token's own rank."""

MODULE = "moe"
REJECTED_BY = {"all_to_all_bytes": ["correctness"]}


def all_to_all_bytes(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes):
    n = n_ranks
    dispatch = [[0] * n for _ in range(n)]
    for t, row in enumerate(experts):
        for j, e in enumerate(row):
            if kept[t][j]:
                dispatch[token_rank[t]][e // experts_per_rank] += hidden * elem_bytes
    combine = [[dispatch[d][s] for d in range(n)] for s in range(n)]
    return {"dispatch": dispatch, "combine": combine, "sent": [sum(dispatch[r]) + sum(combine[r]) for r in range(n)]}
