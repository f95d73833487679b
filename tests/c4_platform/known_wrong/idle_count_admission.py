"""Admission on the idle count (Σ free ≥ n): a gang whose TP groups do not fit is half placed."""

MODULE = "platform"
REJECTED_BY = {"place_gang": ["correctness"]}


def place_gang(free_per_node, n_gpus, tp):
    free = _check_free(free_per_node)
    check_int("n_gpus", n_gpus, 1)
    check_int("tp", tp, 1)
    if n_gpus % tp:
        raise ValueError("n_gpus is not a multiple of tp")
    if sum(free) < n_gpus:
        return None
    taken = [0] * len(free)
    for _ in range(n_gpus // tp):
        fits = [i for i in range(len(free)) if free[i] >= tp]
        if not fits:
            break
        node = min(fits, key=lambda i: (free[i], i))
        free[node] -= tp
        taken[node] += tp
    return [(i, g) for i, g in enumerate(taken) if g]
