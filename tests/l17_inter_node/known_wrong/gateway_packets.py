"""The lecture's gateway: the whole node's traffic for a remote node in one 7.34 MB packet (g·g·m)."""

MODULE = "inter_node"
REJECTED_BY = {"moe_dispatch": ["correctness"]}

_right_dispatch = moe_dispatch


def moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    d = _right_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    d["two_hop_msg_bytes"] = gpus_per_node * gpus_per_node * d["msg_bytes"]
    return d
