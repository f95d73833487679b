"""L13 · The α-β model: latency vs bandwidth, fitting it, and pricing ring and hierarchical all-reduce.

Lecture 13 (02_GPU硬件与集群互联/13_通信第一性原理与性能模型_AlphaBeta_Latency_Bandwidth.md) prices
every message as a fixed start-up cost plus its size over the bandwidth:

    T(S) = α + S / β          α in seconds, β in bytes/s, S in bytes

Below the crossover S* = α·β the latency term dominates (send fewer, bigger messages); above it the
bandwidth term does (send fewer bytes, or over a faster link).

A ring all-reduce over N ranks is 2(N - 1) steps, each moving S/N bytes per rank:

    T_ring = 2(N - 1)·α + 2(N - 1)/N · S/β

A hierarchical all-reduce over n nodes of g GPUs each: reduce-scatter inside the node (NVLink), an
all-reduce of each GPU's S/g shard across nodes (the NIC), then an all-gather inside the node. Only
the middle phase crosses the slow link, with a g-times smaller message.

Units: bytes (int), seconds (float), bytes/s (float). Invalid arguments raise ValueError naming the
argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def _check_bytes(name: str, value: object) -> int:
    """An exact byte count: an int >= 0 (a float such as 1.5 GiB is refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int number of bytes, got {value!r} ({type(value).__name__})")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _check_real(name: str, value: object, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with allow_zero): a latency, a time or a bandwidth."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return float(value)


def transfer_time(message_bytes: int, alpha_s: float, beta_bytes_per_s: float) -> float:
    """Seconds to send one message point to point: α + S/β. 14 GB at 45 GB/s, α = 0: 0.311 s."""
    # TODO: validate, then add the latency term and the bandwidth term.
    ### BEGIN SOLUTION
    s = _check_bytes("message_bytes", message_bytes)
    alpha = _check_real("alpha_s", alpha_s, allow_zero=True)
    return alpha + s / _check_real("beta_bytes_per_s", beta_bytes_per_s)
    ### END SOLUTION


def crossover_bytes(alpha_s: float, beta_bytes_per_s: float) -> float:
    """Message size at which latency and bandwidth cost the same: S* = α·β (bytes, float).

    α = 5 µs, β = 45 GB/s: 225 000 B.
    """
    # TODO: solve α = S/β for S.
    ### BEGIN SOLUTION
    return _check_real("alpha_s", alpha_s, allow_zero=True) * _check_real("beta_bytes_per_s", beta_bytes_per_s)
    ### END SOLUTION


def fit_alpha_beta(sizes: Sequence[int], times: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of T = α + S/β to measurements: returns ``(alpha_s, beta_bytes_per_s)``.

    Ordinary least squares of the times on the sizes: the intercept is α, the slope is 1/β (seconds
    per byte). Needs at least two distinct sizes and an increasing fit (slope > 0); raises
    ValueError otherwise, or when the two sequences differ in length.
    """
    # TODO: fit a line time = a + b·size; α is its intercept, β the inverse of its slope.
    ### BEGIN SOLUTION
    if len(sizes) != len(times):
        raise ValueError(f"sizes and times must have the same length, got {len(sizes)} and {len(times)}")
    xs = [float(_check_bytes("sizes", s)) for s in sizes]
    ys = [_check_real("times", t, allow_zero=True) for t in times]
    if len(set(xs)) < 2:
        raise ValueError("sizes must hold at least two distinct message sizes to fit a line")
    x_mean, y_mean = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxx = math.fsum((x - x_mean) ** 2 for x in xs)
    sxy = math.fsum((x - x_mean) * (y - y_mean) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx  # seconds per byte
    if slope <= 0:
        raise ValueError("times must grow with sizes: the fitted slope 1/β is not positive")
    return y_mean - slope * x_mean, 1.0 / slope
    ### END SOLUTION


def ring_allreduce_time(message_bytes: int, n_ranks: int, alpha_s: float, beta_bytes_per_s: float) -> float:
    """Seconds of a ring all-reduce: 2(N - 1)·α + 2(N - 1)/N · S/β (0 for N = 1).

    TP = 8, S = 134 217 728 B, α = 0.8 µs, β = 450 GB/s: 0.533 ms.
    """
    # TODO: validate, then count the 2(N - 1) steps' latencies and the bytes each rank sends.
    ### BEGIN SOLUTION
    s, n = _check_bytes("message_bytes", message_bytes), check_int("n_ranks", n_ranks, minimum=1)
    alpha = _check_real("alpha_s", alpha_s, allow_zero=True)
    beta = _check_real("beta_bytes_per_s", beta_bytes_per_s)
    steps = 2 * (n - 1)  # reduce-scatter then all-gather, N - 1 steps each
    return steps * alpha + steps / n * s / beta
    ### END SOLUTION


def hierarchical_allreduce_bytes(message_bytes: int, n_nodes: int, gpus_per_node: int) -> dict[str, float]:
    """Bytes each GPU sends in each phase of a hierarchical all-reduce, and in total.

    Keys: "intra_reduce_scatter" ((g - 1)/g · S over NVLink), "inter_allreduce" (a ring all-reduce of
    the S/g shard across the n nodes: 2(n - 1)/n · S/g over the NIC), "intra_all_gather"
    ((g - 1)/g · S), "total". 4 nodes × 8 GPUs, S = 1 GiB: inter 201 326 592 B per GPU, vs
    2·31/32 · S = 2 080 374 784 B for a flat ring over all 32 GPUs.
    """
    # TODO: validate, then price the three phases per GPU.
    ### BEGIN SOLUTION
    s = _check_bytes("message_bytes", message_bytes)
    n, g = check_int("n_nodes", n_nodes, minimum=1), check_int("gpus_per_node", gpus_per_node, minimum=1)
    parts = {
        "intra_reduce_scatter": (g - 1) / g * s,
        "inter_allreduce": 2 * (n - 1) / n * (s / g),  # each GPU owns one S/g shard
        "intra_all_gather": (g - 1) / g * s,
    }
    return {**parts, "total": math.fsum(parts.values())}
    ### END SOLUTION
