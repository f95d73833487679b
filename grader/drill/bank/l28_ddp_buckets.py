"""L28 · DDP's gradient buckets: one ring all-reduce's time, and the communication the backward cannot hide."""

from __future__ import annotations

import random

from grader.drill.bank._kit import MiB, Params, Step, T
from grader.i18n import N_

FN = ("l28_ddp_buckets", "ddp")


def _ar(rng: random.Random) -> Params:
    mib = rng.choice([1, 25, 50, 100, 400])
    return {
        "mib": mib,
        "bytes": mib * MiB,
        "world": rng.choice([2, 8, 16, 64, 256]),
        "alpha_us": rng.choice([5, 10, 20]),
        "beta_gb": rng.choice([12.5, 25, 45, 90]),
    }


def _ar_steps(p: Params) -> list[Step]:
    n = p["world"]
    return [
        Step(
            "=",
            N_("latency: 2(P−1) = {v2_n_1} steps × α"),
            2 * (n - 1) * p["alpha_us"] * 1e-6,
            "s",
            args={"v2_n_1": 2 * (n - 1)},
        ),
        Step("+", N_("bandwidth: 2(P−1)/P · bytes / β"), 2 * (n - 1) / n * p["bytes"] / (p["beta_gb"] * 1e9), "s"),
    ]


def _tl(rng: random.Random) -> Params:
    return {
        "layers": rng.choice([4, 8, 12, 24]),
        "gap_ms": rng.choice([5, 10, 20]),
        "mib": rng.choice([25, 50, 100]),
        "world": rng.choice([8, 16, 32]),
        "beta_gb": rng.choice([25, 45, 90]),
    }


def _tl_args(p: Params) -> tuple:
    n = p["layers"]
    ready = [(n - i) * p["gap_ms"] / 1000 for i in range(n)]  # the last layer's gradient is ready first
    size = p["mib"] * MiB
    return ready, [size] * n, size, p["world"], 0.0, p["beta_gb"] * 1e9


def _tl_steps(p: Params) -> list[Step]:
    n, gap, w = p["layers"], p["gap_ms"] / 1000, p["world"]
    d = 2 * (w - 1) / w * p["mib"] * MiB / (p["beta_gb"] * 1e9)
    end = 0.0
    for b in range(n):
        end = max((b + 1) * gap, end) + d
    return [
        Step(
            "=",
            N_("the last all-reduce ends (each {d_1000_0:.3f} ms, one at a time, none before its bucket is ready)"),
            end,
            "s",
            args={"d_1000_0": d * 1000.0},
        ),
        Step("-", N_("the backward ends (the first layer's gradient)"), n * gap, "s"),
    ]


TEMPLATES = [
    T(
        "l28.allreduce_seconds",
        (*FN, "allreduce_seconds"),
        "communication",
        2,
        28,
        N_(
            "DDP all-reduces a {mib} MiB gradient bucket over {world} ranks with a ring, α = "
            "{alpha_us} µs, β = {beta_gb:g} GB/s. How long does it take?"
        ),
        _ar,
        lambda p, fn: fn(p["bytes"], p["world"], p["alpha_us"] * 1e-6, p["beta_gb"] * 1e9),
        _ar_steps,
        "s",
        ("ms", "s", "us"),
        source=N_("α-β model of the ring all-reduce"),
    ),
    T(
        "l28.exposed_communication",
        (*FN, "ddp_backward_timeline"),
        "parallelism",
        3,
        28,
        N_(
            "DDP, {layers} layers of {mib} MiB each, one bucket per layer; the backward produces "
            "one layer's gradient every {gap_ms} ms (last layer first). Each bucket's ring "
            "all-reduce over {world} ranks runs at {beta_gb} GB/s (α ≈ 0), one at a time. How "
            "much communication is exposed after the backward ends?"
        ),
        _tl,
        lambda p, fn: fn(*_tl_args(p))["exposed_s"],
        _tl_steps,
        "s",
        ("ms", "s"),
        rtol=0.005,
        source=N_("PyTorch DDP (Li et al. 2020): buckets all-reduce while the backward continues"),
    ),
]


def _bk(rng: random.Random) -> Params:
    sizes = [rng.choice([1, 2, 4, 5, 8, 16, 25]) for _ in range(rng.choice([6, 8, 10]))]
    return {"sizes": sizes, "shown": ", ".join(map(str, sizes)), "cap": rng.choice([10, 25, 32])}


def _bk_steps(p: Params) -> list[Step]:
    buckets, filled, n = [], 0, 0
    for size in reversed(p["sizes"]):
        filled, n = filled + size, n + 1
        if filled >= p["cap"]:
            buckets.append(n)
            filled, n = 0, 0
    if n:
        buckets.append(n)
    return [
        Step("=" if i == 0 else "+", N_("bucket {i}: {k} tensor(s)"), 1, args={"i": i, "k": k})
        for i, k in enumerate(buckets)
    ]


TEMPLATES += [
    T(
        "l28.bucket_count",
        (*FN, "assign_buckets"),
        "parallelism",
        2,
        28,
        N_(
            "DDP registers parameters of {shown} MiB (in this order) and buckets them with a "
            "{cap} MiB cap: walking from the last parameter, a bucket closes once it reaches the "
            "cap; tensors are never split. How many buckets?"
        ),
        _bk,
        lambda p, fn: len(fn([s * MiB for s in p["sizes"]], p["cap"] * MiB)),
        _bk_steps,
        "1",
        rtol=1e-9,
        source=N_("PyTorch DDP's reducer (bucket_cap_mb), gradients ready last-layer first"),
    ),
]
