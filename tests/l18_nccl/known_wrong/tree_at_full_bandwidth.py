"""Classic bug: the tree is priced at the full link bandwidth (its 85 % efficiency is dropped)."""

MODULE = "nccl"
REJECTED_BY = {"allreduce_algorithm_times": ["correctness"]}

_correct_times = allreduce_algorithm_times


def allreduce_algorithm_times(message_bytes, n_ranks, alpha_s, beta_bytes_per_s):
    got = _correct_times(message_bytes, n_ranks, alpha_s, beta_bytes_per_s)
    if n_ranks > 1:
        got["tree"] = 2 * math.log2(n_ranks) * alpha_s + 2 * message_bytes / beta_bytes_per_s
    return got
