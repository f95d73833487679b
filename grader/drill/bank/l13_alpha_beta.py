"""L13 · The α-β model: point-to-point time, the crossover size, hierarchical all-reduce traffic."""

from __future__ import annotations

import random

from grader.drill.bank._kit import GiB, MiB, Params, Step, T
from grader.i18n import N_

FN = ("l13_alpha_beta", "alpha_beta")
LINKS = {
    N_("400 Gb/s NIC (45 GB/s effective)"): 45e9,
    N_("NVLink4 one way (450 GB/s)"): 450e9,
    N_("PCIe 5 x16 (55 GB/s)"): 55e9,
    N_("200 Gb/s NIC (22.5 GB/s effective)"): 22.5e9,
}


def _p2p(rng: random.Random) -> Params:
    link = rng.choice(sorted(LINKS))
    mib = rng.choice([1, 16, 256, 1024, 4096])
    alpha_us = rng.choice([1, 2, 5, 10])
    return {
        "link": link,
        "beta": LINKS[link],
        "mib": mib,
        "bytes": mib * MiB,
        "alpha_us": alpha_us,
        "alpha": alpha_us * 1e-6,
    }


def _hier(rng: random.Random) -> Params:
    gib = rng.choice([1, 2, 4, 8])
    return {"gib": gib, "bytes": gib * GiB, "nodes": rng.choice([2, 4, 8, 16, 32]), "g": 8}


def _hier_steps(p: Params) -> list[Step]:
    s, n, g = p["bytes"], p["nodes"], p["g"]
    return [
        Step("=", N_("shard per GPU after the in-node reduce-scatter: S/g"), s / g, "B"),
        Step("×", N_("ring all-reduce across {n} nodes: 2(n−1)/n"), 2 * (n - 1) / n, args={"n": n}),
    ]


TEMPLATES = [
    T(
        "l13.transfer_time",
        (*FN, "transfer_time"),
        "communication",
        1,
        13,
        N_("Send {mib} MiB point to point over a {link}, α = {alpha_us} µs. How long does it take (α-β model)?"),
        _p2p,
        lambda p, fn: fn(p["bytes"], p["alpha"], p["beta"]),
        lambda p: [Step("=", N_("latency α"), p["alpha"], "s"), Step("+", N_("S / β"), p["bytes"] / p["beta"], "s")],
        "s",
        ("ms", "us", "s"),
        source=N_("Hockney's α-β model"),
    ),
    T(
        "l13.crossover_bytes",
        (*FN, "crossover_bytes"),
        "communication",
        1,
        13,
        N_("A {link}, α = {alpha_us} µs: at what message size do latency and bandwidth cost the same time?"),
        _p2p,
        lambda p, fn: fn(p["alpha"], p["beta"]),
        lambda p: [Step("=", N_("α"), p["alpha"], "s"), Step("×", N_("β"), p["beta"], "B/s")],
        "B",
        ("KB", "KiB", "MB", "B"),
        source=N_("α = S/β ⇒ S* = α·β"),
    ),
    T(
        "l13.hierarchical_inter_bytes",
        (*FN, "hierarchical_allreduce_bytes"),
        "communication",
        3,
        13,
        N_(
            "A hierarchical all-reduce of {gib} GiB over {nodes} nodes of 8 GPUs: reduce-scatter "
            "inside each node, ring all-reduce of the shards across nodes, all-gather inside. How "
            "many bytes does each GPU send over the NIC?"
        ),
        _hier,
        lambda p, fn: fn(p["bytes"], p["nodes"], p["g"])["inter_allreduce"],
        _hier_steps,
        "B",
        ("MB", "MiB", "GB", "B"),
        source=N_("NCCL's tree/ring hierarchy; ring factor 2(n−1)/n"),
    ),
]


def _hier_total_steps(p: Params) -> list[Step]:
    s, n, g = p["bytes"], p["nodes"], p["g"]
    return [
        Step("=", N_("in-node reduce-scatter: (g−1)/g · S"), (g - 1) / g * s, "B"),
        Step("+", N_("inter-node ring all-reduce of S/g: 2(n−1)/n · S/g"), 2 * (n - 1) / n * s / g, "B"),
        Step("+", N_("in-node all-gather: (g−1)/g · S"), (g - 1) / g * s, "B"),
    ]


TEMPLATES += [
    T(
        "l13.hierarchical_total_bytes",
        (*FN, "hierarchical_allreduce_bytes"),
        "communication",
        3,
        13,
        N_(
            "A hierarchical all-reduce of {gib} GiB over {nodes} nodes of 8 GPUs (in-node "
            "reduce-scatter, inter-node ring all-reduce of the shards, in-node all-gather): bytes "
            "each GPU sends in all three phases?"
        ),
        _hier,
        lambda p, fn: fn(p["bytes"], p["nodes"], p["g"])["total"],
        _hier_total_steps,
        "B",
        ("GB", "GiB", "MB", "B"),
    ),
]

REGIME = [N_("latency-dominated"), N_("bandwidth-dominated")]

TEMPLATES += [
    T(
        "l13.latency_or_bandwidth",
        (*FN, "crossover_bytes"),
        "communication",
        1,
        13,
        N_(
            "A {link} with α = {alpha_us} µs carries a {mib} MiB message. Is the transfer "
            "latency- or bandwidth-dominated?"
        ),
        _p2p,
        lambda p, fn: REGIME[0] if p["bytes"] < fn(p["alpha"], p["beta"]) else REGIME[1],
        lambda p: [
            Step("=", N_("crossover α·β"), p["alpha"] * p["beta"], "B"),
            Step("=", N_("message"), p["bytes"], "B"),
        ],
        kind="choice",
        options=lambda p: list(REGIME),
    ),
]
