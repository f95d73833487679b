"""Correct alternatives: the share as 1/(1 + S/(αβ)), flows enumerated pair by pair, times from per-message lists."""

MODULE = "inter_node"
ACCEPTED = ["control_share", "moe_dispatch", "dispatch_time_us", "signalled_puts_us"]


def control_share(alpha_s, msg_bytes, beta_bytes_per_s):
    alpha = _check_real("alpha_s", alpha_s)
    size = check_int("msg_bytes", msg_bytes)
    beta = _check_real("beta_bytes_per_s", beta_bytes_per_s, positive=True)
    if alpha == 0 and size == 0:
        raise ValueError("alpha_s and msg_bytes cannot both be 0")
    if alpha == 0:
        return 0.0
    return 1.0 / (1.0 + size / (alpha * beta))


def moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes):
    t, h, e, g, n = _check_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    m = t * h * e
    # one GPU (node 0, local rank 0): walk the remote GPUs and the remote nodes
    one_hop = [(node, rank) for node in range(1, n) for rank in range(g)]
    two_hop = list(range(1, n))
    forwards = [(node, rank) for node in two_hop for rank in range(g) if rank != 0]
    gpus = n * g
    return {
        "msg_bytes": m,
        "nic_bytes_per_gpu": sum(m for _ in one_hop),
        "one_hop_flows_per_gpu": len(one_hop),
        "one_hop_flows_total": gpus * len(one_hop),
        "two_hop_flows_per_gpu": len(two_hop),
        "two_hop_flows_total": gpus * len(two_hop),
        "two_hop_msg_bytes": g * m,
        "nvlink_forwards_per_gpu": len(forwards),
        "nvlink_bytes_per_gpu": len(forwards) * m,
    }


def dispatch_time_us(tokens, hidden, elem_bytes, gpus_per_node, n_nodes, alpha_us, nic_bytes_per_us,
                     nvlink_bytes_per_us):
    t, h, e, g, n = _check_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    a = _check_real("alpha_us", alpha_us)
    b = _check_real("nic_bytes_per_us", nic_bytes_per_us, positive=True)
    bn = _check_real("nvlink_bytes_per_us", nvlink_bytes_per_us, positive=True)
    m = t * h * e
    one = (n - 1) * g * a + (n - 1) * g * m / b
    two = (n - 1) * a + (n - 1) * g * m / b + (n - 1) * (g - 1) * m / bn
    return {"speedup": one / two, "two_hop_us": two, "one_hop_us": one}


def signalled_puts_us(n_msgs, msg_bytes, alpha_us, beta_bytes_per_us, rtt_us, handshake):
    n = check_int("n_msgs", n_msgs)
    s = check_int("msg_bytes", msg_bytes)
    a = _check_real("alpha_us", alpha_us)
    b = _check_real("beta_bytes_per_us", beta_bytes_per_us, positive=True)
    rtt = _check_real("rtt_us", rtt_us)
    if type(handshake) is not bool:
        raise ValueError("handshake must be True or False")
    waits = n * rtt if handshake else 0.0
    return n * a + n * s / b + waits + rtt / 2
