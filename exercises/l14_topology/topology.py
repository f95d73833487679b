"""L14 · Topology: where each parallel group lands, what `nvidia-smi topo -m` says, and rail traffic.

Lecture 14 (02_GPU硬件与集群互联/14_GPU节点与集群硬件拓扑_PCIe_NVLink_NVSwitch_Clos_Rail.md).

Rank layout. With 4-D parallelism (tp, cp, pp, dp) a global rank is a mixed-radix number whose
first digit (``order[0]``) varies fastest. The lecture's formula
``rank = dp·PP·CP·TP + pp·CP·TP + cp·TP + tp`` is the order ("tp", "cp", "pp", "dp"); Megatron-LM's
default puts pp outermost ("tp", "cp", "dp", "pp"). A group of kind ``tp`` is the set of ranks that
differ only in their tp coordinate; with tp innermost and tp dividing the GPUs of a node, every TP
group stays inside one NVLink domain.

Links. ``nvidia-smi topo -m`` prints, for each pair of devices, the path between them: NV# (a bond
of # NVLinks) beats PIX (one PCIe switch) > PXB (several switches) > PHB (a host bridge) > NODE
(between host bridges of one NUMA node) > SYS (across the CPU interconnect). A set of GPUs runs a
collective at the speed of its worst link.

Rails. On a rail-optimized fabric, NIC i of every node plugs into leaf switch i (rail i): a flow
from GPU a of one node to GPU a of another stays on its rail; a flow to a GPU of another index
climbs to the spine (unless the node forwards it over NVLink first). An all-to-all over n nodes of
g GPUs sends (g − 1)/g of its inter-node flows across rails.

Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

DIMS = ("tp", "cp", "pp", "dp")
COURSE_ORDER = ("tp", "cp", "pp", "dp")  # rank = dp·PP·CP·TP + pp·CP·TP + cp·TP + tp
MEGATRON_ORDER = ("tp", "cp", "dp", "pp")
PCIE_RANKS = {"PIX": 5, "PXB": 4, "PHB": 3, "NODE": 2, "SYS": 1}
AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_layout(sizes: dict[str, int], order: Sequence[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """Sizes of the four dims (missing = 1) and the order, checked."""
    if not isinstance(sizes, dict) or any(key not in DIMS for key in sizes):
        raise ValueError(f"sizes must be a dict over {DIMS}, got {sizes!r}")
    full = {dim: check_int(f"sizes[{dim!r}]", sizes.get(dim, 1), 1) for dim in DIMS}
    if isinstance(order, str) or sorted(order) != sorted(DIMS):
        raise ValueError(f"order must be a permutation of {DIMS}, got {order!r}")
    return full, tuple(order)


def _check_kind(kind: str) -> str:
    if kind not in DIMS:
        raise ValueError(f"kind must be one of {DIMS}, got {kind!r}")
    return kind


# ---------------------------------------------------------------------------------------------
# 1. Rank layout and parallel groups
# ---------------------------------------------------------------------------------------------


def rank_coords(rank: int, sizes: dict[str, int], order: Sequence[str] = COURSE_ORDER) -> dict[str, int]:
    """Coordinates ``{"tp", "cp", "pp", "dp"}`` of ``rank``; ``order[0]`` varies fastest.

    TP8·PP2·DP4 (64 ranks), course order: rank 13 → tp 5, cp 0, pp 1, dp 0.

    Errors: sizes not a dict over the four dims or a size < 1 → ValueError naming sizes; order not a
    permutation of the four → naming order; rank not in 0..world−1 → naming rank.
    """
    full, order = _check_layout(sizes, order)
    rank = check_int("rank", rank)
    if rank >= math.prod(full.values()):
        raise ValueError(f"rank must be < world size {math.prod(full.values())}, got {rank}")
    # TODO: peel off one mixed-radix digit per dim, fastest-varying (order[0]) first.
    raise NotImplementedError('TODO: peel off one mixed-radix digit per dim, fastest-varying (order[0]) first.')


def parallel_groups(sizes: dict[str, int], kind: str, order: Sequence[str] = COURSE_ORDER) -> list[list[int]]:
    """All groups of ``kind``: ranks that differ only in their ``kind`` coordinate, each sorted, sorted by rank.

    TP8·PP2·DP4, course order: the TP group of 13 is [8..15], the DP group of 0 is [0, 16, 32, 48],
    the PP group of 0 is [0, 8]; Megatron order: DP group of 0 = [0, 8, 16, 24], PP group [0, 32].

    Errors: as ``rank_coords``; kind not one of the four dims → ValueError naming kind.
    """
    full, order = _check_layout(sizes, order)
    kind = _check_kind(kind)
    # TODO: compute each dim's stride (product of the sizes before it in order); a group is one
    # base rank (kind coordinate 0) plus i·stride(kind) for i < sizes[kind].
    raise NotImplementedError("TODO: compute each dim's stride (product of the sizes before it in order); a group is one base rank (kind coordinate 0) plus i·stride(kind) for i < sizes[kind].")


def groups_crossing_nodes(
    sizes: dict[str, int], gpus_per_node: int, order: Sequence[str] = COURSE_ORDER
) -> dict[str, int]:
    """For each dim, how many of its groups span more than one node (node of rank r = r // gpus_per_node).

    TP8·PP2·DP4 on 8-GPU nodes, course order: {"tp": 0, "cp": 0, "pp": 32, "dp": 16}.

    Errors: as ``parallel_groups``; gpus_per_node < 1 → ValueError naming gpus_per_node.
    """
    full, order = _check_layout(sizes, order)
    g = check_int("gpus_per_node", gpus_per_node, 1)
    # TODO: for each of the four dims, count the groups whose ranks fall on more than one node.
    raise NotImplementedError('TODO: for each of the four dims, count the groups whose ranks fall on more than one node.')


# ---------------------------------------------------------------------------------------------
# 2. Reading `nvidia-smi topo -m`
# ---------------------------------------------------------------------------------------------


def _header_columns(line: str) -> list[str]:
    """Column names of the header row; the affinity columns hold spaces."""
    rest, columns = line, []
    while rest.strip():
        rest = rest.strip()
        name = next((c for c in AFFINITY_COLUMNS if rest.startswith(c)), None) or rest.split()[0]
        columns.append(name)
        rest = rest[len(name) :]
    return columns


def parse_topo(text: str) -> dict:
    """The topology matrix printed by ``nvidia-smi topo -m``, as data.

    Returns ``{"gpus": [0, 1, ...], "links": {(i, j): code} for every ordered GPU pair i ≠ j,
    "nic_links": {(i, "NIC0"): code}, "cpu_affinity": {i: "0-47,96-143"}, "numa": {i: 0}}``
    (NUMA "N/A" → −1; a missing affinity column leaves its dict empty). Cells are separated by tabs
    or spaces; lines before the header (warnings) are ignored; the table ends at the first blank
    line or at "Legend:". H100 fixture: 56 NV18 GPU pairs, GPU0–NIC0 PIX, GPU4's affinity "48-95,144-191".

    Errors (ValueError naming text): not a str; no header row starting with GPU0; a row of the table
    whose name is not a column, with too few cells, with an unknown link code, or an asymmetric matrix.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be the str printed by nvidia-smi topo -m, got {type(text).__name__}")
    # TODO: find the header, then read each table row: its cells against the device columns, then
    # CPU affinity and NUMA affinity for GPU rows; check codes and symmetry.
    raise NotImplementedError('TODO: find the header, then read each table row: its cells against the device columns, then CPU affinity and NUMA affinity for GPU rows; check codes and symmetry.')


# ---------------------------------------------------------------------------------------------
# 3. Choosing GPUs by their worst link
# ---------------------------------------------------------------------------------------------


def link_rank(code: str) -> int:
    """Bigger is faster: NV# → 100 + #, PIX 5, PXB 4, PHB 3, NODE 2, SYS 1. NV18 → 118.

    Errors: any other code (including "X") → ValueError naming code.
    """
    # TODO: NV followed by a number, or one of the PCIe path codes; anything else is refused.
    raise NotImplementedError('TODO: NV followed by a number, or one of the PCIe path codes; anything else is refused.')


def best_gpu_set(topo: dict, k: int, available: Sequence[int] | None = None) -> tuple[int, ...]:
    """The k GPUs (of ``available``, default all) whose worst link is best.

    Maximise (min link_rank over the pairs, sum of link_rank over the pairs); ties → the
    lexicographically smallest sorted tuple. Fragmented fixture (NVLink inside 0–3, PCIe inside
    4–7, SYS across): best 4 = (0, 1, 2, 3); among 1..7 → (4, 5, 6, 7); best 3 of 4..7 → (4, 5, 6).

    Errors: k < 1 or k > len(available) → ValueError naming k; a GPU not in topo → naming available.
    """
    gpus = sorted(set(topo["gpus"] if available is None else available))
    if any(g not in topo["gpus"] for g in gpus):
        raise ValueError(f"available must list GPUs of topo {topo['gpus']}, got {available!r}")
    k = check_int("k", k, 1)
    if k > len(gpus):
        raise ValueError(f"k must be <= the {len(gpus)} available GPUs, got {k}")
    # TODO: score every k-subset by (worst pair rank, total pair rank) and keep the first best one.
    raise NotImplementedError('TODO: score every k-subset by (worst pair rank, total pair rank) and keep the first best one.')


# ---------------------------------------------------------------------------------------------
# 4. All-to-all on a rail-optimized fabric
# ---------------------------------------------------------------------------------------------


def alltoall_flow_classes(n_nodes: int, gpus_per_node: int) -> dict[str, int]:
    """Ordered flows (src ≠ dst) of one all-to-all over n nodes of g GPUs, by path.

    ``intra_node`` n·g(g−1) (NVLink), ``same_rail`` n(n−1)·g (same GPU index, one leaf switch),
    ``cross_rail`` n(n−1)·g(g−1) (through the spine), ``total`` = N(N−1) with N = n·g.
    (2, 8) → 112, 16, 112, 240; 16 nodes of 8: cross_rail 13,440 of 16,256.

    Errors: a count < 1 or not an int → ValueError naming it.
    """
    n, g = check_int("n_nodes", n_nodes, 1), check_int("gpus_per_node", gpus_per_node, 1)
    # TODO: count the ordered pairs of each class and their total.
    raise NotImplementedError('TODO: count the ordered pairs of each class and their total.')
