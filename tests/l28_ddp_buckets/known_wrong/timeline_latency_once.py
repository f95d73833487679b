"""Classic bug: one α per all-reduce instead of the ring's 2(P−1) steps, so small buckets look free."""

MODULE = "ddp"
REJECTED_BY = {"ddp_backward_timeline": ["correctness"]}


def allreduce_seconds(n_bytes, world_size, alpha_s, bytes_per_s):
    if world_size == 1:
        return 0.0
    return alpha_s + 2 * (world_size - 1) / world_size * n_bytes / bytes_per_s
