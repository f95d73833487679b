"""Classic bug: no argument checks; a float GiB size, zero ranks or an unknown collective return numbers."""

MODULE = "nccl"
REJECTED_BY = {"ring_allreduce_bytes_per_rank": ["correctness"], "bus_bandwidth": ["correctness"],
               "allreduce_algorithm_times": ["correctness"], "best_protocol": ["correctness"]}


def ring_allreduce_bytes_per_rank(message_bytes, n_ranks):
    return 2 * (n_ranks - 1) / n_ranks * message_bytes if n_ranks else 0.0


def bus_bandwidth(alg_bw, n_ranks, collective):
    p = max(n_ranks, 1)
    factor = {"all_reduce": 2 * (p - 1) / p, "broadcast": 1.0, "reduce": 1.0}.get(collective, (p - 1) / p)
    return alg_bw * factor


def allreduce_algorithm_times(message_bytes, n_ranks, alpha_s, beta_bytes_per_s):
    p, s = max(n_ranks, 1), message_bytes
    if p == 1:
        return {"ring": 0.0, "tree": 0.0}
    beta = beta_bytes_per_s or 1.0
    return {"ring": 2 * (p - 1) * alpha_s + 2 * (p - 1) / p * s / beta,
            "tree": 2 * math.log2(p) * alpha_s + 2 * s / (TREE_EFFICIENCY * beta)}


def best_protocol(message_bytes):
    times = {name: lat + message_bytes / bw for name, (lat, bw) in PROTOCOLS.items()}
    return min(("ll", "ll128", "simple"), key=times.__getitem__)
