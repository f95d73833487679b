"""L18 · NCCL by the numbers: ring bytes per rank, bus bandwidth, ring vs tree, protocol choice."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import GB, MiB, Params, Step, T
from grader.i18n import N_

FN = ("l18_nccl", "nccl")
FACTOR = {
    "all_reduce": "2(P−1)/P",
    "all_gather": "(P−1)/P",
    "reduce_scatter": "(P−1)/P",
    "all_to_all": "(P−1)/P",
    "broadcast": "1",
}


def _ring(rng: random.Random) -> Params:
    gb = rng.choice([1, 14, 16, 140, 810])
    return {"gb": gb, "bytes": gb * GB, "ranks": rng.choice([2, 4, 8, 16, 64, 512, 1024])}


def _busbw(rng: random.Random) -> Params:
    coll = rng.choice(sorted(FACTOR))
    return {"coll": coll, "ranks": rng.choice([2, 4, 8, 16, 32]), "alg_gb": rng.choice([20, 45, 120, 240, 380])}


def _factor(coll: str, n: int) -> float:
    return {"all_reduce": 2 * (n - 1) / n, "broadcast": 1.0}.get(coll, (n - 1) / n)


def _algos(rng: random.Random) -> Params:
    mib = rng.choice([1, 4, 16, 64, 256])
    return {
        "mib": mib,
        "bytes": mib * MiB,
        "ranks": rng.choice([8, 16, 64, 256]),
        "alpha_us": rng.choice([2, 5, 10]),
        "beta_gb": rng.choice([45, 100, 450]),
    }


def _tree_steps(p: Params) -> list[Step]:
    n, a, b = p["ranks"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9
    return [
        Step(
            "=",
            N_("2·log2(P) = {v2_math_log2_n:g} latencies × α"),
            2 * math.log2(n) * a,
            "s",
            args={"v2_math_log2_n": 2 * math.log2(n)},
        ),
        Step("+", N_("every byte up and down the tree: 2·S / (0.85·β)"), 2 * p["bytes"] / (0.85 * b), "s"),
    ]


def _ring_steps(p: Params) -> list[Step]:
    n, a, b = p["ranks"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9
    return [
        Step("=", N_("2(P−1) = {v2_n_1} steps × α"), 2 * (n - 1) * a, "s", args={"v2_n_1": 2 * (n - 1)}),
        Step("+", N_("2(P−1)/P · S / β"), 2 * (n - 1) / n * p["bytes"] / b, "s"),
    ]


def _proto(rng: random.Random) -> Params:
    kib = rng.choice([1, 4, 16, 64, 256, 1024, 4096, 65536, 262144])
    return {"kib": kib, "bytes": kib * 1024}


PROTOS = ("ll", "ll128", "simple")
MODEL = {"simple": (6e-6, 450e9), "ll": (1e-6, 225e9), "ll128": (2e-6, 450e9 * 120 / 128)}


def _proto_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            N_("{k}: {lat_1000000_0:g} µs + S / {bw_1000000000_0:.4g} GB/s"),
            lat + p["bytes"] / bw,
            "s",
            args={"k": k, "lat_1000000_0": lat * 1000000.0, "bw_1000000000_0": bw / 1000000000.0},
        )
        for k, (lat, bw) in MODEL.items()
    ]


TEMPLATES = [
    T(
        "l18.ring_bytes_per_rank",
        (*FN, "ring_allreduce_bytes_per_rank"),
        "communication",
        1,
        18,
        N_("A ring all-reduce of {gb} GB of gradients over {ranks} ranks: how many bytes does each rank send?"),
        _ring,
        lambda p, fn: fn(p["bytes"], p["ranks"]),
        lambda p: [
            Step("=", N_("message M"), p["bytes"], "B"),
            Step("×", N_("reduce-scatter + all-gather: 2(P−1)/P"), 2 * (p["ranks"] - 1) / p["ranks"]),
        ],
        "B",
        ("GB", "GiB", "TB", "B"),
        source=N_("Patarasuk & Yuan 2009 (bandwidth-optimal ring)"),
    ),
    T(
        "l18.bus_bandwidth",
        (*FN, "bus_bandwidth"),
        "communication",
        2,
        18,
        N_("nccl-tests reports algbw = {alg_gb} GB/s for {coll} over {ranks} GPUs. What busbw does it report?"),
        _busbw,
        lambda p, fn: fn(p["alg_gb"] * 1e9, p["ranks"], p["coll"]),
        lambda p: [
            Step("=", N_("algbw = S / t"), p["alg_gb"] * 1e9, "B/s"),
            Step(
                "×",
                N_("{coll} factor {FACTOR_coll}"),
                _factor(p["coll"], p["ranks"]),
                args={"coll": p["coll"], "FACTOR_coll": FACTOR[p["coll"]]},
            ),
        ],
        "B/s",
        ("GB/s", "Gb/s", "B/s"),
        source=N_("nccl-tests doc/PERFORMANCE.md"),
    ),
    T(
        "l18.ring_time",
        (*FN, "allreduce_algorithm_times"),
        "communication",
        2,
        18,
        N_(
            "All-reduce of {mib} MiB over {ranks} ranks, α = {alpha_us} µs per step, β = "
            "{beta_gb} GB/s: how long does the ring algorithm take?"
        ),
        _algos,
        lambda p, fn: fn(p["bytes"], p["ranks"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9)["ring"],
        _ring_steps,
        "s",
        ("ms", "us", "s"),
        source=N_("α-β model of the ring (Thakur et al. 2005)"),
    ),
    T(
        "l18.tree_time",
        (*FN, "allreduce_algorithm_times"),
        "communication",
        3,
        18,
        N_(
            "All-reduce of {mib} MiB over {ranks} ranks, α = {alpha_us} µs, β = {beta_gb} GB/s, a "
            "double binary tree reaching 85 % of the link bandwidth: how long does the tree "
            "algorithm take?"
        ),
        _algos,
        lambda p, fn: fn(p["bytes"], p["ranks"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9)["tree"],
        _tree_steps,
        "s",
        ("ms", "us", "s"),
        source=N_("the lecture's lab model: t_tree = 2·log2(P)·α + 2S/(0.85·β)"),
    ),
    T(
        "l18.best_protocol",
        (*FN, "best_protocol"),
        "communication",
        2,
        18,
        N_(
            "NCCL on H100 NVLink, modelled as LL (1 µs, half the 450 GB/s: 4 flag bytes per 8), "
            "LL128 (2 µs, 120/128 of it) and Simple (6 µs, full 450 GB/s). Which protocol is "
            "fastest for a {kib} KiB message?"
        ),
        _proto,
        lambda p, fn: fn(p["bytes"]),
        _proto_steps,
        kind="choice",
        options=lambda p: list(PROTOS),
        source=N_("NCCL protocols: LL, LL128, Simple (NCCL docs; the lecture's model)"),
    ),
]

ALGOS = ["ring", "tree"]

TEMPLATES += [
    T(
        "l18.ring_or_tree",
        (*FN, "allreduce_algorithm_times"),
        "communication",
        2,
        18,
        N_(
            "All-reduce of {mib} MiB over {ranks} ranks, α = {alpha_us} µs, β = {beta_gb} GB/s; "
            "the tree reaches 85 % of the bandwidth. Which algorithm is faster in the α-β model?"
        ),
        _algos,
        lambda p, fn: min(ALGOS, key=lambda a: fn(p["bytes"], p["ranks"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9)[a]),
        lambda p: [*_ring_steps(p)[:1], *_tree_steps(p)[:1]],
        kind="choice",
        options=lambda p: list(ALGOS),
        source=N_("trees win at small messages and many ranks (latency), rings at large messages"),
    ),
]
