"""Classic bug: no argument checks; zero stages, a stage past the end or 60 ranks for tp·pp = 32 slip through."""

MODULE = "parallel"
REJECTED_BY = {
    "pipeline_bubble_time_fraction": ["correctness"],
    "pipeline_bubble_ratio": ["correctness"],
    "one_f_one_b_schedule": ["correctness"],
    "megatron_groups": ["correctness"],
    "tp_allreduce_bytes_per_layer": ["correctness"],
}


def pipeline_bubble_time_fraction(p, m, v=1):
    return (p - 1) / (v * m + p - 1) if v * m + p - 1 else 0.0


def pipeline_bubble_ratio(p, m, v=1):
    return (p - 1) / (v * m) if v * m else 0.0


def one_f_one_b_schedule(p, m, stage):
    warmup = max(min(p - stage - 1, m), 0)
    schedule = [("F", i) for i in range(warmup)]
    for i in range(max(m - warmup, 0)):
        schedule += [("F", warmup + i), ("B", i)]
    return schedule + [("B", i) for i in range(max(m - warmup, 0), m)]


def megatron_groups(world_size, tp, pp):
    dp = max(int(world_size) // max(tp * pp, 1), 1)
    groups = {}
    for rank in range(int(world_size)):
        q, rest = divmod(rank, max(tp * dp, 1))
        d, t = divmod(rest, max(tp, 1))
        groups[rank] = {
            "tp": tuple(q * tp * dp + d * tp + i for i in range(tp)),
            "dp": tuple(q * tp * dp + j * tp + t for j in range(dp)),
            "pp": tuple(k * tp * dp + d * tp + t for k in range(pp)),
        }
    return groups


def tp_allreduce_bytes_per_layer(batch, seq_len, hidden, tp, elem_bytes=2):
    return int(8 * (tp - 1) * -(-(batch * seq_len * hidden * elem_bytes) // max(tp, 1)))
