"""Deduplication beyond the contract: a token sent once per destination rank even when two of its experts live
there (DeepEP does this; this unit's ledger counts one message per kept assignment)."""

MODULE = "moe"
REJECTED_BY = {"all_to_all_bytes": ["correctness"]}


def all_to_all_bytes(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes):
    n = n_ranks
    dispatch = [[0] * n for _ in range(n)]
    for t, row in enumerate(experts):
        for dst in {e // experts_per_rank for j, e in enumerate(row) if kept[t][j]}:
            if dst != token_rank[t]:
                dispatch[token_rank[t]][dst] += hidden * elem_bytes
    combine = [[dispatch[d][s] for d in range(n)] for s in range(n)]
    return {"dispatch": dispatch, "combine": combine, "sent": [sum(dispatch[r]) + sum(combine[r]) for r in range(n)]}
