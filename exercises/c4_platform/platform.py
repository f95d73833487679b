"""C4 · An AI platform, end to end: place a gang, measure fragmentation, heal failures, size the cluster.

Capstone 4 (09_Capstone综合实战项目/04_Capstone_企业级AI_Platform统一调度与集群架构RFC.md).

A platform scheduler places a distributed job as a gang (all of its GPUs or none) and keeps each
tensor-parallel group inside one node, where NVLink carries its all-reduces. Idle GPUs are not all
usable: the course's FragRatio = 1 − Σ running / N_total counts idle GPUs, but a node with one busy GPU
leaves 7 GPUs that no TP = 8 group can use (7/8 = 87.5 % of the node stranded). At 10,000 GPUs a
hardware failure arrives about every 12 hours, so a node daemon polls NVML every 500 ms, taints a
node whose GPU reports a hardware Xid, swaps in a hot spare (2 % of the fleet) and restarts the job
from its last checkpoint: MTTR under 5 minutes. The RFC sizes the nodes, the NICs (8 × 400 Gb/s per
node), the spare pool and the failure rate.

Conventions: GPU counts and bytes are exact ints; times are float seconds; decimal inputs that feed a
ceiling (poll times, spare fractions) are taken as typed (``Fraction(str(x))``). Invalid arguments raise
ValueError naming the argument (``free_per_node[2]``, ``events[3]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors): what a platform daemon does with each code.
REPLACE_XIDS = frozenset({48, 64, 74, 79, 95})  # DBE, row-remap failure, NVLink, off the bus, uncontained ECC
RESTART_XIDS = frozenset({13, 31, 43, 94})  # application faults (13, 31 MMU, 43) and contained ECC (94)
WATCH_XIDS = frozenset({63, 92})  # row remapping pending, high single-bit ECC rate: record, do not act

POLL_S = 0.5  # C4 §4.2: the node daemon reads NVML every 500 ms
SWAP_S = 60.0  # time to bring a hot spare into the job's topology (an assumption of the exercise)
RESTART_S = 120.0  # reload the last distributed checkpoint from local NVMe (C4: "within a hundred seconds")


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_free(free_per_node: Sequence[int], gpus_per_node: int | None = None) -> list[int]:
    if isinstance(free_per_node, (str, bytes)) or not isinstance(free_per_node, Sequence) or not free_per_node:
        raise ValueError(f"free_per_node must be a non-empty sequence of free-GPU counts, got {free_per_node!r}")
    out = []
    for i, f in enumerate(free_per_node):
        check_int(f"free_per_node[{i}]", f)
        if gpus_per_node is not None and f > gpus_per_node:
            raise ValueError(f"free_per_node[{i}] = {f} is more than the node's {gpus_per_node} GPUs")
        out.append(f)
    return out


def _check_real(name: str, x: float, *, positive: bool = False, below_one: bool = False) -> Fraction:
    """A finite real >= 0 (> 0 when ``positive``; < 1 when ``below_one``), as the decimal typed."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {x!r}")
    if positive and x == 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    if below_one and x >= 1:
        raise ValueError(f"{name} must be below 1, got {x!r}")
    return Fraction(str(x))


def _check_events(events: Sequence[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
        raise ValueError(f"events must be a sequence of (t_s, node, xid), got {events!r}")
    out = []
    last = None
    for k, ev in enumerate(events):
        if not isinstance(ev, (tuple, list)) or len(ev) != 3:
            raise ValueError(f"events[{k}] must be a (t_s, node, xid) triple, got {ev!r}")
        t, node, xid = ev
        _check_real(f"events[{k}]", t)
        check_int(f"events[{k}] node", node)
        check_int(f"events[{k}] xid", xid, 1)
        if last is not None and t < last:
            raise ValueError(f"events[{k}] at t = {t} s comes before the previous event ({last} s): sort by time")
        last = t
        out.append((t, node, xid))
    return out


# ---------------------------------------------------------------------------------------------
# 1. Gang placement, TP inside a node
# ---------------------------------------------------------------------------------------------


def place_gang(free_per_node: Sequence[int], n_gpus: int, tp: int) -> list[tuple[int, int]] | None:
    """Place a job of ``n_gpus`` GPUs as ``n_gpus / tp`` tensor-parallel groups, each inside one node.

    All or nothing: if the nodes cannot hold every group (Σ ⌊free_i / tp⌋ < n_gpus / tp) nothing is
    placed and the result is None, even when Σ free_i ≥ n_gpus. Otherwise the groups are placed one at
    a time, each on the best-fit node: the node with the fewest free GPUs that still holds ``tp`` of
    them (ties → the lower node id), so big holes stay whole for later big jobs.

    Returns ``[(node, gpus_taken), ...]`` sorted by node, each ``gpus_taken`` a multiple of ``tp``.

    Example: ``place_gang([8, 1, 7, 8], 8, 1)`` = ``[(1, 1), (2, 7)]`` (first fit would break node 0);
    ``place_gang([8, 6, 4, 2], 8, 2)`` = ``[(1, 2), (2, 4), (3, 2)]``; ``place_gang([7, 7, 7, 7], 8, 8)``
    = None (28 idle GPUs, no node holds a TP-8 group).

    Raises ValueError naming the argument: ``free_per_node`` empty or ``free_per_node[i]`` not an
    exact int ≥ 0; ``n_gpus`` or ``tp`` not an exact int ≥ 1; ``n_gpus`` not a multiple of ``tp``.
    """
    free = _check_free(free_per_node)
    check_int("n_gpus", n_gpus, 1)
    check_int("tp", tp, 1)
    if n_gpus % tp:
        raise ValueError(f"n_gpus = {n_gpus} is not a multiple of tp = {tp}: a TP group cannot be split")
    # TODO: refuse early when the groups cannot fit; then best-fit one group at a time.
    raise NotImplementedError('TODO: refuse early when the groups cannot fit; then best-fit one group at a time.')


# ---------------------------------------------------------------------------------------------
# 2. Fragmentation
# ---------------------------------------------------------------------------------------------


def frag_metrics(free_per_node: Sequence[int], gpus_per_node: int, tp: int = 8) -> dict[str, float | int]:
    """How much of a cluster is idle, and how much of the idle part no TP-``tp`` group can use.

    With ``idle = Σ free_i`` and ``total = gpus_per_node · len(free_per_node)``:

    * ``total``, ``busy = total − idle``, ``idle`` (exact ints);
    * ``frag_ratio = idle / total`` (the course's FragRatio, 1 − Σ running / N_total);
    * ``stranded_gpus = Σ (free_i mod tp)``: idle GPUs that cannot join a TP group in their node;
    * ``stranded_fraction = stranded_gpus / idle`` (0.0 when nothing is idle);
    * ``placeable_groups = Σ ⌊free_i / tp⌋``.

    Example: 16 nodes of 8, one with 7 free → frag_ratio 7/128 = 0.0546875, stranded 7 (the course's
    7/8 node), placeable 0; four nodes with 7 free → 0.21875, stranded 28, stranded_fraction 1.0.

    Raises ValueError naming the argument: ``gpus_per_node`` or ``tp`` not an exact int ≥ 1, ``tp``
    above ``gpus_per_node``; ``free_per_node[i]`` not an int in 0..gpus_per_node.
    """
    check_int("gpus_per_node", gpus_per_node, 1)
    check_int("tp", tp, 1)
    if tp > gpus_per_node:
        raise ValueError(f"tp = {tp} is larger than a node ({gpus_per_node} GPUs): a TP group lives in one node")
    free = _check_free(free_per_node, gpus_per_node)
    # TODO: totals, then the two ratios (mind an idle count of 0).
    raise NotImplementedError('TODO: totals, then the two ratios (mind an idle count of 0).')


# ---------------------------------------------------------------------------------------------
# 3. Self-healing
# ---------------------------------------------------------------------------------------------


def self_heal(
    events: Sequence[tuple[float, int, int]],
    n_spares: int,
    poll_s: float = POLL_S,
    swap_s: float = SWAP_S,
    restart_s: float = RESTART_S,
) -> dict:
    """Replay Xid events ``(t_s, node, xid)`` through the platform's healing daemon.

    The daemon polls every ``poll_s``: an event at ``t`` is detected at ``ceil(t / poll_s) · poll_s``
    (exact on the decimals typed: 2.1 s at a 0.3 s poll is detected at 2.1 s). Then, in event order:

    * a node already tainted → ``"already_tainted"`` (nothing more to do);
    * Xid 48, 64, 74, 79, 95 (hardware) → the node is tainted; with a spare left, ``"replace"``: the
      spare is swapped in and the job restarts from its checkpoint, ``recovered = detect + swap_s +
      restart_s``; without one, ``"suspend"`` (the job waits for hardware, no recovery time);
    * Xid 13, 31, 43, 94 (the application's fault or a contained ECC error) → ``"restart"``: no taint,
      ``recovered = detect + restart_s``;
    * Xid 63, 92 and any other code → ``"watch"``: recorded, no action.

    Returns ``{"incidents": [{"node", "xid", "action", "detected_s", "recovered_s"}, ...] (one per event,
    in order; recovered_s None unless replaced or restarted), "mttr_s": mean(recovered_s − t) over the
    recovered incidents (None when there is none), "tainted": sorted nodes, "spares_left": int}``.

    Example: ``[(10.2, 3, 79), (11.0, 3, 48), (30.0, 5, 31), (40.1, 7, 92), (100.0, 9, 74),
    (200.3, 11, 48)]`` with 2 spares → replace (recovered 190.5), already_tainted, restart (150.0),
    watch, replace (280.0), suspend; mttr_s 160.1, tainted [3, 9, 11], spares_left 0.

    Raises ValueError naming the argument: ``events`` not a sequence; ``events[k]`` not a triple of a
    time ≥ 0, a node int ≥ 0 and an Xid int ≥ 1, or earlier than ``events[k-1]``; ``n_spares`` not an
    exact int ≥ 0; ``poll_s`` not > 0; ``swap_s`` or ``restart_s`` negative.
    """
    evs = _check_events(events)
    check_int("n_spares", n_spares)
    poll = _check_real("poll_s", poll_s, positive=True)
    _check_real("swap_s", swap_s)
    _check_real("restart_s", restart_s)
    # TODO: detection on the poll grid; classify each event; count spares; taint; then the MTTR.
    raise NotImplementedError('TODO: detection on the poll grid; classify each event; count spares; taint; then the MTTR.')


# ---------------------------------------------------------------------------------------------
# 4. RFC sizing
# ---------------------------------------------------------------------------------------------


def rfc_sizing(
    n_gpus: int,
    gpus_per_node: int,
    nics_per_node: int,
    nic_gbit_s: int,
    spare_fraction: float,
    gpu_mtbf_cluster_h: float,
) -> dict[str, float | int]:
    """The RFC's sizing table for a cluster of ``n_gpus``.

    * ``nodes = ceil(n_gpus / gpus_per_node)``;
    * ``injection_bytes_s = nics_per_node · nic_gbit_s · 10⁹ / 8`` per node (exact int, decimal Gb/s);
    * ``spare_gpus = ceil(spare_fraction · n_gpus)`` on the decimal as typed (0.07 · 100 = 7, not 8);
    * ``spare_nodes = ceil(spare_gpus / gpus_per_node)`` (spares are whole nodes: a job swaps nodes);
    * ``failures_per_day = 24 / gpu_mtbf_cluster_h`` (the cluster's mean time between failures).

    Example: ``rfc_sizing(10000, 8, 8, 400, 0.02, 12)`` → nodes 1250, injection 400,000,000,000 B/s
    (3.2 Tb/s per node), spare_gpus 200, spare_nodes 25, failures_per_day 2.0.

    Raises ValueError naming the argument: a count not an exact int ≥ 1; ``spare_fraction`` not in
    [0, 1); ``gpu_mtbf_cluster_h`` not a finite number > 0.
    """
    check_int("n_gpus", n_gpus, 1)
    check_int("gpus_per_node", gpus_per_node, 1)
    check_int("nics_per_node", nics_per_node, 1)
    check_int("nic_gbit_s", nic_gbit_s, 1)
    frac = _check_real("spare_fraction", spare_fraction, below_one=True)
    _check_real("gpu_mtbf_cluster_h", gpu_mtbf_cluster_h, positive=True)
    # TODO: five entries; the ceilings exact (integer division, the fraction as typed).
    raise NotImplementedError('TODO: five entries; the ceilings exact (integer division, the fraction as typed).')
