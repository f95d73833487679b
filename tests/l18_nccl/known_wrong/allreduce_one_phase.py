"""Classic bug: the all-reduce factor (P-1)/P: only the reduce-scatter phase is counted, not the all-gather."""

MODULE = "nccl"
REJECTED_BY = {"ring_allreduce_bytes_per_rank": ["correctness"]}


def ring_allreduce_bytes_per_rank(message_bytes, n_ranks):
    m, p = _check_bytes("message_bytes", message_bytes), _check_ranks("n_ranks", n_ranks)
    return (p - 1) / p * m
