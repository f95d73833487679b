"""Speedup as two-hop over one-hop (a ratio below 1 where two-hop wins)."""

MODULE = "inter_node"
REJECTED_BY = {"dispatch_time_us": ["correctness"]}

_right_time = dispatch_time_us


def dispatch_time_us(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                     nvlink_bytes_per_us):
    out = _right_time(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                      nvlink_bytes_per_us)
    out["speedup"] = out["two_hop_us"] / out["one_hop_us"]
    return out
