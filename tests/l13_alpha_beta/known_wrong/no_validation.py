"""Classic bug: no argument checks; float GiB sizes, zero ranks and negative latencies return numbers."""

MODULE = "alpha_beta"
REJECTED_BY = {
    "transfer_time": ["correctness"], "crossover_bytes": ["correctness"], "fit_alpha_beta": ["correctness"],
    "ring_allreduce_time": ["correctness"], "hierarchical_allreduce_bytes": ["correctness"]}


def transfer_time(message_bytes, alpha_s, beta_bytes_per_s):
    return alpha_s + message_bytes / (beta_bytes_per_s or 1.0)


def crossover_bytes(alpha_s, beta_bytes_per_s):
    return abs(alpha_s * beta_bytes_per_s)


def fit_alpha_beta(sizes, times):
    xs, ys = [float(s) for s in sizes], list(times)[: len(sizes)]
    x_mean, y_mean = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - x_mean) ** 2 for x in xs) or 1.0
    slope = sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, ys, strict=False)) / sxx
    return y_mean - slope * x_mean, 1.0 / slope if slope else math.inf


def ring_allreduce_time(message_bytes, n_ranks, alpha_s, beta_bytes_per_s):
    n = max(n_ranks, 1)
    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / abs(beta_bytes_per_s)


def hierarchical_allreduce_bytes(message_bytes, n_nodes, gpus_per_node):
    n, g, s = max(n_nodes, 1), max(gpus_per_node, 1), message_bytes
    parts = {"intra_reduce_scatter": (g - 1) / g * s, "inter_allreduce": 2 * (n - 1) / n * s / g,
             "intra_all_gather": (g - 1) / g * s}
    return {**parts, "total": sum(parts.values())}
