"""Correct alternative: play the ring step by step and add up the chunk each rank sends."""

MODULE = "nccl"
ACCEPTED = ["ring_allreduce_bytes_per_rank"]


def ring_allreduce_bytes_per_rank(message_bytes, n_ranks):
    m, p = _check_bytes("message_bytes", message_bytes), _check_ranks("n_ranks", n_ranks)
    sent = 0.0
    for _phase in ("reduce_scatter", "all_gather"):
        for _step in range(p - 1):
            sent += m / p  # one chunk to the right-hand neighbour
    return sent
