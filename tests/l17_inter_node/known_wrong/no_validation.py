"""No argument checks: floats for counts, negative latencies, zero bandwidths and 0/0 shares go through."""

MODULE = "inter_node"
REJECTED_BY = {"control_share": ["correctness"], "moe_dispatch": ["correctness"],
               "dispatch_time_us": ["correctness"], "signalled_puts_us": ["correctness"]}


def check_int(name, value, minimum=0):
    return value


def _check_real(name, value, *, positive=False):
    return value


def _check_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    return tokens, hidden, elem_bytes, gpus_per_node, n_nodes


def control_share(alpha_s, msg_bytes, beta_bytes_per_s):
    total = alpha_s + msg_bytes / beta_bytes_per_s if beta_bytes_per_s else 1.0
    return alpha_s / total if total else 0.0


def dispatch_time_us(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                     nvlink_bytes_per_us):
    d = moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    b, bn = nic_bytes_per_us or 1.0, nvlink_bytes_per_us or 1.0
    one = d["one_hop_flows_per_gpu"] * (alpha_us + d["msg_bytes"] / b)
    two = d["two_hop_flows_per_gpu"] * (alpha_us + d["two_hop_msg_bytes"] / b) + d["nvlink_bytes_per_gpu"] / bn
    return {"one_hop_us": one, "two_hop_us": two, "speedup": one / two if two else 0.0}


def signalled_puts_us(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake):
    b = beta_bytes_per_us or 1.0
    return n_msgs * (alpha_us + msg_bytes / b + (rtt_us if handshake else 0)) + rtt_us / 2
