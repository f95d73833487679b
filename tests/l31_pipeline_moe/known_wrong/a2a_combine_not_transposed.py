"""Classic bug: the combine matrix copied from the dispatch instead of transposed: rank src "sends the results back"
to the ranks it dispatched to, so a rank that dispatched more is charged twice."""

MODULE = "moe"
REJECTED_BY = {"all_to_all_bytes": ["correctness"]}

_reference_a2a = all_to_all_bytes


def all_to_all_bytes(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes):
    out = _reference_a2a(token_rank, experts, kept, experts_per_rank, n_ranks, hidden, elem_bytes)
    out["combine"] = [list(r) for r in out["dispatch"]]
    out["sent"] = [2 * sum(r) for r in out["dispatch"]]
    return out
