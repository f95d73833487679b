"""The same-rail receiver forwards all g shares, its own included: g forwards per remote node, not g − 1."""

MODULE = "inter_node"
REJECTED_BY = {"moe_dispatch": ["correctness"]}

_right_dispatch = moe_dispatch


def moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    d = _right_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    d["nvlink_forwards_per_gpu"] = (n_nodes - 1) * gpus_per_node
    d["nvlink_bytes_per_gpu"] = (n_nodes - 1) * gpus_per_node * d["msg_bytes"]
    return d
