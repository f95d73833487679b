"""Classic bug: each intra-node phase charged a full all-reduce, 2(g-1)/g · S, instead of (g-1)/g · S."""

MODULE = "alpha_beta"
REJECTED_BY = {"hierarchical_allreduce_bytes": ["correctness"]}

_correct_hier = hierarchical_allreduce_bytes


def hierarchical_allreduce_bytes(message_bytes, n_nodes, gpus_per_node):
    got = _correct_hier(message_bytes, n_nodes, gpus_per_node)
    got["intra_reduce_scatter"] *= 2
    got["intra_all_gather"] *= 2
    got["total"] = got["intra_reduce_scatter"] + got["inter_allreduce"] + got["intra_all_gather"]
    return got
