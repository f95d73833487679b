"""L14 · Topology: where a rank sits in the TP/PP/DP grid, and all-to-all flows by path."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l14_topology", "topology")


def _grid(rng: random.Random) -> Params:
    tp, pp, dp = rng.choice([2, 4, 8]), rng.choice([1, 2, 4, 8]), rng.choice([2, 4, 8, 16])
    return {"tp": tp, "pp": pp, "dp": dp, "world": tp * pp * dp, "rank": rng.randrange(tp * pp * dp)}


def _sizes(p: Params) -> dict[str, int]:
    return {"tp": p["tp"], "cp": 1, "pp": p["pp"], "dp": p["dp"]}


def _a2a(rng: random.Random) -> Params:
    return {"nodes": rng.choice([2, 4, 8, 16, 32]), "g": rng.choice([4, 8])}


TEMPLATES = [
    T(
        "l14.rank_pp_coord",
        (*FN, "rank_coords"),
        "parallelism",
        2,
        14,
        N_(
            "TP{tp} · PP{pp} · DP{dp} ({world} ranks), TP varying fastest, then PP, then DP. "
            "Which pipeline stage (0-based) does global rank {rank} belong to?"
        ),
        _grid,
        lambda p, fn: fn(p["rank"], _sizes(p))["pp"],
        lambda p: [
            Step("=", N_("rank // TP = {rank} // {tp}"), p["rank"] // p["tp"], args={"rank": p["rank"], "tp": p["tp"]}),
            Step(
                "-",
                N_("whole rounds of PP: ({rank_tp} // {pp}) × {pp}"),
                p["rank"] // p["tp"] // p["pp"] * p["pp"],
                args={"rank_tp": p["rank"] // p["tp"], "pp": p["pp"]},
            ),
        ],
        "1",
        rtol=1e-9,
        source=N_("mixed-radix rank = tp + TP·(pp + PP·dp) (Megatron-style order with TP innermost)"),
    ),
    T(
        "l14.rank_dp_coord",
        (*FN, "rank_coords"),
        "parallelism",
        2,
        14,
        N_(
            "TP{tp} · PP{pp} · DP{dp} ({world} ranks), TP varying fastest, then PP, then DP. "
            "Which data-parallel replica (0-based) does global rank {rank} belong to?"
        ),
        _grid,
        lambda p, fn: fn(p["rank"], _sizes(p))["dp"],
        lambda p: [
            Step("=", N_("rank"), p["rank"]),
            Step("÷", N_("TP × PP ranks per replica"), p["tp"] * p["pp"]),
            Step("-", N_("drop the fraction"), p["rank"] / (p["tp"] * p["pp"]) - p["rank"] // (p["tp"] * p["pp"])),
        ],
        "1",
        rtol=1e-9,
        source=N_("mixed-radix rank = tp + TP·(pp + PP·dp)"),
    ),
    T(
        "l14.alltoall_cross_rail",
        (*FN, "alltoall_flow_classes"),
        "communication",
        3,
        14,
        N_(
            "An all-to-all over {nodes} nodes of {g} GPUs on a rail-optimized fabric (GPU i of "
            "every node on leaf i). Of the ordered (source, destination) flows, how many cross "
            "rails (different node and different GPU index)?"
        ),
        _a2a,
        lambda p, fn: fn(p["nodes"], p["g"])["cross_rail"],
        lambda p: [
            Step("=", N_("ordered node pairs n(n−1)"), p["nodes"] * (p["nodes"] - 1)),
            Step("×", N_("ordered GPU-index pairs with different indices g(g−1)"), p["g"] * (p["g"] - 1)),
        ],
        "1",
        rtol=1e-9,
        source=N_("rail-optimized topology: same-rail traffic stays on one leaf"),
    ),
    T(
        "l14.alltoall_intra_node",
        (*FN, "alltoall_flow_classes"),
        "communication",
        2,
        14,
        N_("An all-to-all over {nodes} nodes of {g} GPUs: how many of the ordered flows stay inside a node (NVLink)?"),
        _a2a,
        lambda p, fn: fn(p["nodes"], p["g"])["intra_node"],
        lambda p: [
            Step("=", N_("nodes"), p["nodes"]),
            Step("×", N_("ordered pairs inside a node g(g−1)"), p["g"] * (p["g"] - 1)),
        ],
        "1",
        rtol=1e-9,
    ),
]

TEMPLATES += [
    T(
        "l14.rank_tp_coord",
        (*FN, "rank_coords"),
        "parallelism",
        1,
        14,
        N_("TP{tp} · PP{pp} · DP{dp}, TP varying fastest: what is global rank {rank}'s TP rank?"),
        _grid,
        lambda p, fn: fn(p["rank"], _sizes(p))["tp"],
        lambda p: [
            Step("=", N_("rank"), p["rank"]),
            Step(
                "-",
                N_("whole TP groups: ({rank} // {tp}) × {tp}"),
                p["rank"] // p["tp"] * p["tp"],
                args={"rank": p["rank"], "tp": p["tp"]},
            ),
        ],
        "1",
        rtol=1e-9,
    ),
    T(
        "l14.alltoall_same_rail",
        (*FN, "alltoall_flow_classes"),
        "communication",
        2,
        14,
        N_(
            "An all-to-all over {nodes} nodes of {g} GPUs, rail-optimized: how many ordered flows "
            "go between different nodes on the same rail (same GPU index)?"
        ),
        _a2a,
        lambda p, fn: fn(p["nodes"], p["g"])["same_rail"],
        lambda p: [
            Step("=", N_("ordered node pairs n(n−1)"), p["nodes"] * (p["nodes"] - 1)),
            Step("×", N_("GPU indices (one rail each)"), p["g"]),
        ],
        "1",
        rtol=1e-9,
    ),
]


def _cross(rng: random.Random) -> Params:
    return {**_grid(rng), "g": rng.choice([4, 8])}


def _crossing(p: Params, dim: str) -> int:
    tp, pp, dp, g = p["tp"], p["pp"], p["dp"], p["g"]
    world = tp * pp * dp
    stride = {"tp": 1, "pp": tp, "dp": tp * pp}[dim]
    size = {"tp": tp, "pp": pp, "dp": dp}[dim]
    starts = [r for r in range(world) if (r // stride) % size == 0]
    return sum(len({(s + k * stride) // g for k in range(size)}) > 1 for s in starts)


TEMPLATES += [
    T(
        "l14.dp_groups_crossing",
        (*FN, "groups_crossing_nodes"),
        "parallelism",
        2,
        14,
        N_(
            "TP{tp} · PP{pp} · DP{dp} on nodes of {g} GPUs, TP varying fastest, then PP, then DP "
            "(node = rank // {g}). How many DP groups span more than one node?"
        ),
        _cross,
        lambda p, fn: fn({"tp": p["tp"], "cp": 1, "pp": p["pp"], "dp": p["dp"]}, p["g"])["dp"],
        lambda p: [
            Step(
                "=",
                N_("DP groups are ranks r, r + {tp_pp}, …: those touching two nodes"),
                _crossing(p, "dp"),
                args={"tp_pp": p["tp"] * p["pp"]},
            )
        ],
        "1",
        rtol=1e-9,
    ),
    T(
        "l14.pp_groups_crossing",
        (*FN, "groups_crossing_nodes"),
        "parallelism",
        2,
        14,
        N_(
            "TP{tp} · PP{pp} · DP{dp} on nodes of {g} GPUs, TP varying fastest, then PP, then DP. "
            "How many pipeline groups span more than one node?"
        ),
        _cross,
        lambda p, fn: fn({"tp": p["tp"], "cp": 1, "pp": p["pp"], "dp": p["dp"]}, p["g"])["pp"],
        lambda p: [
            Step(
                "=",
                N_("PP groups are ranks r, r + {tp}, …: those touching two nodes"),
                _crossing(p, "pp"),
                args={"tp": p["tp"]},
            )
        ],
        "1",
        rtol=1e-9,
    ),
]
