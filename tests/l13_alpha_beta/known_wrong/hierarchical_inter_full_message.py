"""Classic bug: the inter-node all-reduce priced on the full message S instead of each GPU's S/g shard."""

MODULE = "alpha_beta"
REJECTED_BY = {"hierarchical_allreduce_bytes": ["correctness"]}

_correct_hier = hierarchical_allreduce_bytes


def hierarchical_allreduce_bytes(message_bytes, n_nodes, gpus_per_node):
    got = _correct_hier(message_bytes, n_nodes, gpus_per_node)
    got["inter_allreduce"] *= gpus_per_node
    got["total"] = got["intra_reduce_scatter"] + got["inter_allreduce"] + got["intra_all_gather"]
    return got
