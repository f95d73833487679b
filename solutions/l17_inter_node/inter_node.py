"""L17 · Inter-node data movement: the control plane's share, one-hop vs two-hop MoE dispatch, one-sided puts.

Lecture 17 (02_GPU硬件与集群互联/17_机间数据搬运_GPU_Initiated_RDMA_IBRC_OneHop.md).

Control plane. GPUDirect RDMA unified the data path, not the control path: with CPU-posted verbs
(IBRC) every message pays α ≈ 6 µs (notify 1.0 + scheduling 3.0 + WQE 0.3 + doorbell 1.2 + WQE
fetch 0.5) before its S/β on the wire. The share of the time the control plane takes,
α / (α + S/β), is 0.1 % for a 256 MB gradient bucket and 95 % for a 14 KB decode message at
β = 45 GB/s. IBGDA (the GPU rings the NIC's doorbell) brings α near 1 µs.

MoE dispatch. In an all-to-all over N nodes of g GPUs, each GPU sends m = tokens·hidden·elem bytes
to every GPU of the other nodes. One-hop (each GPU posts one RDMA message per remote GPU) makes
(N−1)·g messages per GPU. Two-hop (DeepEP's normal kernels) sends one message of g·m bytes to the
same-rail GPU of each remote node, which forwards the g−1 shares of its neighbours over NVLink:
N−1 messages per GPU, the same NIC bytes, (N−1)·(g−1)·m NVLink bytes at the receivers.

Put with signal. A one-sided put is fire-and-forget: n messages serialize on the NIC and the last
one lands half a round trip later. Waiting for an acknowledgement after each put adds a full RTT
per message.

Units: bytes (int), µs or s as each name says, bytes per µs or per s as each name says. Invalid
arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_real(name: str, value: float, *, positive: bool = False) -> float:
    """A finite real (int or float, never bool), ≥ 0, or > 0 when ``positive``; else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def _check_dispatch(tokens: int, hidden: int, elem_bytes: int, gpus_per_node: int, n_nodes: int) -> tuple:
    return (check_int("tokens", tokens, 1), check_int("hidden", hidden, 1), check_int("elem_bytes", elem_bytes, 1),
            check_int("gpus_per_node", gpus_per_node, 1), check_int("n_nodes", n_nodes, 2))


# ---------------------------------------------------------------------------------------------
# 1. The control plane's share of a message
# ---------------------------------------------------------------------------------------------


def control_share(alpha_s: float, msg_bytes: int, beta_bytes_per_s: float) -> float:
    """The fraction of a message's time spent before its first byte moves: α / (α + S/β).

    ``alpha_s`` is the per-message control latency in seconds, ``msg_bytes`` the payload S,
    ``beta_bytes_per_s`` the link bandwidth β in bytes per second.

    Example: ``control_share(6e-6, 14_000, 45e9)`` = 6 / (6 + 0.3111) = 0.9507042 (the lecture's
    95.1 %); ``control_share(6e-6, 256_000_000, 45e9)`` = 0.0010536 (0.1 %).

    Errors: alpha_s not a finite real ≥ 0, msg_bytes not an exact int ≥ 0, beta_bytes_per_s not a
    finite real > 0 → ValueError naming it; alpha_s = msg_bytes = 0 (no time at all) → ValueError
    naming alpha_s and msg_bytes.
    """
    alpha = _check_real("alpha_s", alpha_s)
    size = check_int("msg_bytes", msg_bytes)
    beta = _check_real("beta_bytes_per_s", beta_bytes_per_s, positive=True)
    if alpha == 0 and size == 0:
        raise ValueError("alpha_s and msg_bytes are both 0: a message that takes no time has no control share")
    # TODO: the control latency over the whole time of the message (control plus data).
    ### BEGIN SOLUTION
    return alpha / (alpha + size / beta)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. One-hop vs two-hop MoE dispatch: messages and bytes
# ---------------------------------------------------------------------------------------------


def moe_dispatch(tokens: int, hidden: int, elem_bytes: int, gpus_per_node: int, n_nodes: int) -> dict[str, int]:
    """Messages and bytes of one MoE dispatch per GPU and in all, one-hop and two-hop.

    Every GPU sends ``tokens`` tokens of ``hidden`` elements of ``elem_bytes`` to every GPU of the
    other nodes: m = tokens·hidden·elem bytes per (sender, remote receiver). With g = gpus_per_node
    and N = n_nodes (exact ints):

        msg_bytes                m
        nic_bytes_per_gpu        (N−1)·g·m          (the same on both paths)
        one_hop_flows_per_gpu    (N−1)·g            one message per remote GPU
        one_hop_flows_total      N·g·(N−1)·g
        two_hop_flows_per_gpu    N−1                one message per remote node, to its same-rail GPU
        two_hop_flows_total      N·g·(N−1)
        two_hop_msg_bytes        g·m                the shares of all g GPUs of that node
        nvlink_forwards_per_gpu  (N−1)·(g−1)        a same-rail receiver forwards its g−1 neighbours' shares
        nvlink_bytes_per_gpu     (N−1)·(g−1)·m

    Intra-node traffic of the all-to-all itself is out of scope.

    Example: ``moe_dispatch(8, 7168, 2, 8, 8)``: m = 114,688 B; 6,422,528 NIC bytes per GPU; one-hop
    56 messages per GPU (3,584 in all); two-hop 7 per GPU (448 in all) of 917,504 B; 49 NVLink
    forwards per GPU, 5,619,712 B.

    Errors: n_nodes < 2, any other argument < 1, or not an exact int → ValueError naming it.
    """
    t, h, e, g, n = _check_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    # TODO: count the messages and bytes per GPU for both paths, then the totals over the N·g GPUs.
    ### BEGIN SOLUTION
    m = t * h * e
    return {
        "msg_bytes": m,
        "nic_bytes_per_gpu": (n - 1) * g * m,
        "one_hop_flows_per_gpu": (n - 1) * g,
        "one_hop_flows_total": n * g * (n - 1) * g,
        "two_hop_flows_per_gpu": n - 1,
        "two_hop_flows_total": n * g * (n - 1),
        "two_hop_msg_bytes": g * m,
        "nvlink_forwards_per_gpu": (n - 1) * (g - 1),
        "nvlink_bytes_per_gpu": (n - 1) * (g - 1) * m,
    }
    ### END SOLUTION


def dispatch_time_us(tokens: int, hidden: int, elem_bytes: int, gpus_per_node: int, n_nodes: int, alpha_us: float,
                     nic_bytes_per_us: float, nvlink_bytes_per_us: float) -> dict[str, float]:
    """One GPU's dispatch time in µs on each path, its messages serialized on its NIC.

        one_hop_us = F1·(α + m/β)                              F1 = (N−1)·g messages of m bytes
        two_hop_us = F2·(α + g·m/β) + nvlink_bytes/β_nvl       F2 = N−1 messages of g·m bytes,
                                                               then the forwards (not overlapped)
        speedup    = one_hop_us / two_hop_us

    with α = ``alpha_us``, β = ``nic_bytes_per_us``, β_nvl = ``nvlink_bytes_per_us`` and the counts of
    :func:`moe_dispatch`. Keys: ``one_hop_us``, ``two_hop_us``, ``speedup`` (floats).

    Example: ``dispatch_time_us(8, 7168, 2, 8, 8, 6.0, 45e3, 450e3)`` → one_hop_us 478.72284,
    two_hop_us 197.21109, speedup 2.427464; with α = 1 µs (IBGDA): 198.72284, 162.21109, 1.225088.

    Errors: the counts as in moe_dispatch; alpha_us not a finite real ≥ 0, a bandwidth not a finite
    real > 0 → ValueError naming it.
    """
    _check_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    alpha = _check_real("alpha_us", alpha_us)
    beta = _check_real("nic_bytes_per_us", nic_bytes_per_us, positive=True)
    beta_nvl = _check_real("nvlink_bytes_per_us", nvlink_bytes_per_us, positive=True)
    # TODO: price each path's messages with α + bytes/β, add the two-hop NVLink forwards, and compare.
    ### BEGIN SOLUTION
    d = moe_dispatch(tokens, hidden, elem_bytes, gpus_per_node, n_nodes)
    one = d["one_hop_flows_per_gpu"] * (alpha + d["msg_bytes"] / beta)
    two = d["two_hop_flows_per_gpu"] * (alpha + d["two_hop_msg_bytes"] / beta) + d["nvlink_bytes_per_gpu"] / beta_nvl
    return {"one_hop_us": one, "two_hop_us": two, "speedup": one / two}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Fire-and-forget puts vs a handshake per message
# ---------------------------------------------------------------------------------------------


def signalled_puts_us(n_msgs: int, msg_bytes: int, alpha_us: float, beta_bytes_per_us: float, rtt_us: float,
                      handshake: bool) -> float:
    """Time in µs until the last of ``n_msgs`` puts (with its signal) has landed at the target.

        fire-and-forget:  n·(α + S/β) + rtt/2           the puts stream; the last lands half an RTT later
        handshake:        n·(α + S/β + rtt) + rtt/2     each put waits for the peer's acknowledgement

    Example: ``signalled_puts_us(1000, 14_000, 1.0, 45e3, 10.0, False)`` = 1316.1111 µs; with
    ``handshake=True`` 11,316.1111 µs (8.6×).

    Errors: n_msgs or msg_bytes not an exact int ≥ 0; alpha_us or rtt_us not a finite real ≥ 0;
    beta_bytes_per_us not a finite real > 0; handshake not a bool → ValueError naming it.
    """
    n = check_int("n_msgs", n_msgs)
    size = check_int("msg_bytes", msg_bytes)
    alpha = _check_real("alpha_us", alpha_us)
    beta = _check_real("beta_bytes_per_us", beta_bytes_per_us, positive=True)
    rtt = _check_real("rtt_us", rtt_us)
    if not isinstance(handshake, bool):
        raise ValueError(f"handshake must be a bool, got {handshake!r}")
    # TODO: n messages of α + S/β each, plus a round trip per message when each waits for an ACK, plus the last flight.
    ### BEGIN SOLUTION
    per_msg = alpha + size / beta + (rtt if handshake else 0.0)
    return n * per_msg + rtt / 2
    ### END SOLUTION
