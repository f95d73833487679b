"""Two-hop still pays α for every remote GPU ((N−1)·g latencies): aggregation saves nothing on the control plane."""

MODULE = "inter_node"
REJECTED_BY = {"dispatch_time_us": ["correctness"]}

_right_time = dispatch_time_us


def dispatch_time_us(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                     nvlink_bytes_per_us):
    out = _right_time(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                      nvlink_bytes_per_us)
    out["two_hop_us"] += (n_nodes - 1) * (gpus_per_node - 1) * alpha_us
    out["speedup"] = out["one_hop_us"] / out["two_hop_us"]
    return out
