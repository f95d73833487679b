"""Inter-node flows counted for one pair of nodes only (g and g(g-1)), not for n(n-1) ordered node pairs."""

MODULE = "topology"
REJECTED_BY = {"alltoall_flow_classes": ["correctness"]}


def alltoall_flow_classes(n_nodes, gpus_per_node):
    n, g = check_int("n_nodes", n_nodes, 1), check_int("gpus_per_node", gpus_per_node, 1)
    pairs = 2 if n > 1 else 0
    parts = {"intra_node": n * g * (g - 1), "same_rail": pairs * g, "cross_rail": pairs * g * (g - 1)}
    parts["total"] = sum(parts.values())
    return parts
