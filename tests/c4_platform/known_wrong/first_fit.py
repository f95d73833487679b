"""First fit: each TP group goes to the lowest node that holds it, breaking full nodes a later big job needs."""

MODULE = "platform"
REJECTED_BY = {"place_gang": ["correctness"]}


def place_gang(free_per_node, n_gpus, tp):
    free = _check_free(free_per_node)
    check_int("n_gpus", n_gpus, 1)
    check_int("tp", tp, 1)
    if n_gpus % tp:
        raise ValueError("n_gpus is not a multiple of tp")
    if sum(f // tp for f in free) < n_gpus // tp:
        return None
    taken = [0] * len(free)
    for _ in range(n_gpus // tp):
        node = next(i for i in range(len(free)) if free[i] >= tp)
        free[node] -= tp
        taken[node] += tp
    return [(i, g) for i, g in enumerate(taken) if g]
