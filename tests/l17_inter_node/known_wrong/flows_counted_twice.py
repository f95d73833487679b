"""Counts each one-hop flow at both ends (sender and receiver), doubling the job's total."""

MODULE = "inter_node"
REJECTED_BY = {"moe_dispatch": ["correctness"]}

_right_dispatch = moe_dispatch


def moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    d = _right_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    d["one_hop_flows_total"] *= 2
    d["two_hop_flows_total"] *= 2
    return d
