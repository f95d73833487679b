"""A group counted once per extra node it touches (len(nodes) - 1), not once per group that crosses."""

MODULE = "topology"
REJECTED_BY = {"groups_crossing_nodes": ["correctness"]}


def groups_crossing_nodes(sizes, gpus_per_node, order=COURSE_ORDER):
    full, order = _check_layout(sizes, order)
    g = check_int("gpus_per_node", gpus_per_node, 1)
    return {dim: sum(len({r // g for r in group}) - 1 for group in parallel_groups(full, dim, order)) for dim in DIMS}
