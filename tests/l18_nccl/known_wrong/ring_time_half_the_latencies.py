"""Classic bug: the ring pays P-1 latencies instead of 2(P-1) (the all-gather phase has its own steps)."""

MODULE = "nccl"
REJECTED_BY = {"allreduce_algorithm_times": ["correctness"]}

_correct_times = allreduce_algorithm_times


def allreduce_algorithm_times(message_bytes, n_ranks, alpha_s, beta_bytes_per_s):
    got = _correct_times(message_bytes, n_ranks, alpha_s, beta_bytes_per_s)
    return {**got, "ring": got["ring"] - (n_ranks - 1) * alpha_s}
