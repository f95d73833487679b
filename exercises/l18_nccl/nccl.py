"""L18 · NCCL by the numbers: ring traffic, bus bandwidth, ring vs tree, and the protocol choice.

Lecture 18 (02_GPU硬件与集群互联/18_NCCL通信库与Collective算子_Ring_Tree_NVLS_NVSHMEM.md) explains
what NCCL's collectives cost and how nccl-tests reports them.

A ring all-reduce of an M-byte buffer over P ranks is a reduce-scatter then an all-gather, each
P - 1 steps that move one M/P chunk per rank: every rank sends 2(P - 1)/P · M bytes.

nccl-tests (doc/PERFORMANCE.md) reports ``algbw = S / t`` and ``busbw = algbw × factor``, where the
factor makes busbw comparable with the link's peak whatever P is:

    all_reduce                    2(P - 1)/P
    all_gather, reduce_scatter    (P - 1)/P      (S is the full gathered / scattered buffer)
    all_to_all                    (P - 1)/P
    broadcast, reduce             1

Ring vs tree (the lecture's lab): with α the per-step latency and β the link bandwidth (bytes/s),
    t_ring = 2(P - 1)·α + 2(P - 1)/P · S/β
    t_tree = 2·log2(P)·α + 2·S/(TREE_EFFICIENCY·β)
the tree pays fewer latencies but moves every byte up and down the tree at a lower efficiency.

Protocols (the lecture's lab, 8×H100 NVLink model): each is a fixed latency plus S over an
effective bandwidth; LL spends half of every 8-byte word on a flag, LL128 8 bytes of 128.

Units: bytes (int), seconds (float), bytes/s (float). Invalid arguments raise ValueError naming
the argument.
"""

from __future__ import annotations

import math

from grader.constants import GPUS

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all")
TREE_EFFICIENCY = 0.85  # lecture 18 lab: a tree reaches ~85 % of the link bandwidth

# Protocol model of lecture 18's lab: (latency in s, effective bandwidth in bytes/s).
SIMPLE_BYTES_PER_S = GPUS["H100-SXM"].nvlink_bytes_per_s / 2  # NVLink4 per direction: 450 GB/s
PROTOCOLS: dict[str, tuple[float, float]] = {
    "simple": (6e-6, SIMPLE_BYTES_PER_S),  # full bandwidth, highest latency
    "ll": (1e-6, SIMPLE_BYTES_PER_S * 4 / 8),  # 4 data bytes + 4 flag bytes per 8-byte store
    "ll128": (2e-6, SIMPLE_BYTES_PER_S * 120 / 128),  # 120 data bytes + 8 flag bytes per 128
}


def _check_bytes(name: str, value: object) -> int:
    """An exact byte count: an int >= 0 (a float such as 1.5 GiB is refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int number of bytes, got {value!r} ({type(value).__name__})")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _check_ranks(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return value


def _check_rate(name: str, value: object, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with allow_zero): a time, a latency or a bandwidth."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return float(value)


def ring_allreduce_bytes_per_rank(message_bytes: int, n_ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``message_bytes``: 2(P - 1)/P · M.

    P = 1 sends nothing. 140 GB of bf16 gradients over 512 ranks: 279.45 GB per rank.
    """
    # TODO: validate, then count the reduce-scatter and the all-gather phases.
    raise NotImplementedError('TODO: validate, then count the reduce-scatter and the all-gather phases.')


def bus_bandwidth(alg_bw: float, n_ranks: int, collective: str) -> float:
    """nccl-tests' bus bandwidth: ``alg_bw`` (bytes/s, S/t) times the collective's factor.

    Factors in the module docstring. 8×H100 all-reduce of 536 870 912 B in 1412.1 µs:
    algbw 380.19 GB/s → busbw 665.33 GB/s.
    """
    # TODO: validate, then scale alg_bw by the collective's nccl-tests factor.
    raise NotImplementedError("TODO: validate, then scale alg_bw by the collective's nccl-tests factor.")


def allreduce_algorithm_times(message_bytes: int, n_ranks: int, alpha_s: float,
                              beta_bytes_per_s: float) -> dict[str, float]:
    """Seconds of a ring and of a tree all-reduce: ``{"ring": t_ring, "tree": t_tree}``.

    Formulas in the module docstring (log2 of a non-power-of-two P is fractional). 64 MiB over 8
    ranks, α = 2 µs, β = 45 GB/s: ring 2.638 ms, tree 3.521 ms. P = 1: both 0.
    """
    # TODO: validate, then price both algorithms with the α-β model.
    raise NotImplementedError('TODO: validate, then price both algorithms with the α-β model.')


def best_protocol(message_bytes: int) -> str:
    """The fastest of ``PROTOCOLS`` for one message: "ll", "ll128" or "simple".

    Each costs latency + message_bytes / effective bandwidth; ties go to the earlier of
    ("ll", "ll128", "simple"). 4 KiB → "ll"; 4 MiB → "ll128"; 256 MiB → "simple".
    """
    # TODO: validate, then return the protocol with the smallest modelled time.
    raise NotImplementedError('TODO: validate, then return the protocol with the smallest modelled time.')
