"""Leaves out the NVLink forward: two-hop looks free of its second hop."""

MODULE = "inter_node"
REJECTED_BY = {"dispatch_time_us": ["correctness"]}

_right_time = dispatch_time_us


def dispatch_time_us(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                     nvlink_bytes_per_us):
    out = _right_time(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                      nvlink_bytes_per_us)
    d = moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    out["two_hop_us"] -= d["nvlink_bytes_per_gpu"] / nvlink_bytes_per_us
    out["speedup"] = out["one_hop_us"] / out["two_hop_us"]
    return out
