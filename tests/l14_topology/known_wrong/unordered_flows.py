"""Flows counted as unordered pairs: an all-to-all sends both ways, so every class comes out halved."""

MODULE = "topology"
REJECTED_BY = {"alltoall_flow_classes": ["correctness"]}


def alltoall_flow_classes(n_nodes, gpus_per_node):
    n, g = check_int("n_nodes", n_nodes, 1), check_int("gpus_per_node", gpus_per_node, 1)
    parts = {"intra_node": n * g * (g - 1) // 2, "same_rail": n * (n - 1) * g // 2,
             "cross_rail": n * (n - 1) * g * (g - 1) // 2}
    parts["total"] = sum(parts.values())
    return parts
