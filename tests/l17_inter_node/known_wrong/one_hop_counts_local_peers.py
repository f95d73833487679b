"""One-hop messages to every other GPU of the job (N·g − 1 = 63), the node's own peers included."""

MODULE = "inter_node"
REJECTED_BY = {"moe_dispatch": ["correctness"]}

_right_dispatch = moe_dispatch


def moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    d = _right_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    d["one_hop_flows_per_gpu"] = n_nodes * gpus_per_node - 1
    d["one_hop_flows_total"] = n_nodes * gpus_per_node * d["one_hop_flows_per_gpu"]
    return d
