"""Classic bug: dropped assignments counted as if they were sent to their expert."""

MODULE = "moe"
REJECTED_BY = {"all_to_all_bytes": ["correctness"]}

_reference_a2a = all_to_all_bytes


def all_to_all_bytes(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes):
    everything = [[True] * len(r) for r in kept]
    return _reference_a2a(token_rank, experts, everything, experts_per_rank, n_ranks, hidden, elem_bytes)
