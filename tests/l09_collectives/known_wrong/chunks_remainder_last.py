"""Puts every leftover element in the last chunk (numel // P each, the rest at the end) instead of one more in
each of the first numel % P chunks: the bounds and the per-rank byte ledger disagree with tensor_split."""

MODULE = "ring"
REJECTED_BY = {"ring_chunks": ["correctness"], "ring_bytes_sent": ["correctness"],
               "ring_reduce_scatter": ["correctness", "efficiency"], "ring_all_gather": ["correctness", "efficiency"],
               "ring_all_reduce": ["correctness", "efficiency"]}


def ring_chunks(numel, world_size):
    n = check_int("numel", numel)
    p = check_int("world_size", world_size, minimum=1)
    base = n // p
    bounds = [(c * base, (c + 1) * base) for c in range(p - 1)]
    return bounds + [((p - 1) * base, n)]
