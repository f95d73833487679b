"""L36 · Inference capacity planning: KV per GPU under TP, the KV pool, B_max, the cluster's size."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import GB, Params, Step, T
from grader.i18n import N_

FN = ("l36_capacity_planning", "capacity")
MODELS = {
    "LLaMA-3-70B": (80, 8, 128, 70),
    "Qwen2.5-72B": (80, 8, 128, 72),
    "LLaMA-3-8B": (32, 8, 128, 8),
    "LLaMA-2-13B": (40, 40, 128, 13),
}


def _kv(rng: random.Random) -> Params:
    name = rng.choice(sorted(MODELS))
    layers, kv, hd, billions = MODELS[name]
    return {
        "model": name,
        "layers": layers,
        "kv": kv,
        "hd": hd,
        "billions": billions,
        "tp": rng.choice([t for t in (1, 2, 4, 8, 16) if kv % t == 0 or t % kv == 0]),
    }


def _kv_steps(p: Params) -> list[Step]:
    heads = max(1, p["kv"] // p["tp"])
    return [
        Step("=", N_("K and V × layers"), 2 * p["layers"]),
        Step("×", N_("KV heads on this GPU: max(1, {kv}/{tp})"), heads, args={"kv": p["kv"], "tp": p["tp"]}),
        Step("×", N_("head dim"), p["hd"]),
        Step("×", N_("bf16"), 2, "B"),
    ]


def _pool(rng: random.Random) -> Params:
    gpu_gb = rng.choice([80, 141])
    weights = rng.choice([9, 18, 35, 40])
    return {
        "gpu_gb": gpu_gb,
        "util": rng.choice([0.85, 0.9, 0.92, 0.95]),
        "w_gb": weights,
        "rt_gb": rng.choice([2, 4, 6]),
    }


def _pool_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            N_("budget: floor({gpu_gb} GB × {util})"),
            math.floor(p["gpu_gb"] * GB * p["util"]),
            "B",
            args={"gpu_gb": p["gpu_gb"], "util": p["util"]},
        ),
        Step("-", N_("weights"), p["w_gb"] * GB, "B"),
        Step("-", N_("runtime (context, graphs, activations)"), p["rt_gb"] * GB, "B"),
    ]


def _bmax(rng: random.Random) -> Params:
    return {
        "pool_gb": rng.choice([20, 35, 50, 60]),
        "kvt": rng.choice([40_960, 131_072, 163_840, 327_680]),
        "s": rng.choice([2000, 4096, 8192, 17000, 32768]),
    }


def _bmax_steps(p: Params) -> list[Step]:
    per = p["kvt"] * p["s"]
    exact = p["pool_gb"] * GB / per
    return [
        Step("=", N_("pool"), p["pool_gb"] * GB, "B"),
        Step("÷", N_("KV bytes of one request: per token × S_total"), per, "B"),
        Step("-", N_("whole requests only"), exact - math.floor(exact)),
    ]


def _cluster(rng: random.Random) -> Params:
    return {
        "qps": rng.choice([10, 20, 40, 80]),
        "sgen": rng.choice([200, 400, 800]),
        "ttft": rng.choice([0.3, 0.6, 1.0]),
        "tpot_ms": rng.choice([20, 30, 50]),
        "node_tps": rng.choice([1600, 3200, 6400]),
        "bmax": rng.choice([64, 120, 256, 610]),
    }


def _args(p: Params) -> tuple:
    return p["qps"], p["sgen"], p["ttft"], p["tpot_ms"] / 1000, p["node_tps"], p["bmax"], 8


def _cluster_steps(p: Params) -> list[Step]:
    thr = math.ceil(p["qps"] * p["sgen"] / p["node_tps"] * 1.25 * 1.15 - 1e-9)
    life = p["ttft"] + p["sgen"] * p["tpot_ms"] / 1000
    mem = math.ceil(math.ceil(p["qps"] * life / p["bmax"] - 1e-9) * 1.25 * 1.15 - 1e-9)
    if thr >= mem:
        return [
            Step(
                "=",
                N_("throughput: ceil(QPS·S_gen / node tok/s × 1.25 × 1.15) = {thr} nodes (memory needs {mem})"),
                thr,
                args={"thr": thr, "mem": mem},
            ),
            Step("×", N_("GPUs per node"), 8),
        ]
    return [
        Step(
            "=",
            N_(
                "memory: concurrency QPS·(TTFT + S_gen·TPOT) = {qps_life:g}, over B_max per node, × "
                "1.25 × 1.15 → {mem} nodes (throughput needs {thr})"
            ),
            mem,
            args={"qps_life": p["qps"] * life, "mem": mem, "thr": thr},
        ),
        Step("×", N_("GPUs per node"), 8),
    ]


TEMPLATES = [
    T(
        "l36.kv_per_token_per_gpu",
        (*FN, "kv_bytes_per_token_per_gpu"),
        "serving",
        2,
        36,
        N_(
            "{model} ({layers} layers, {kv} KV heads of {hd}), bf16 KV cache, tensor parallel TP "
            "= {tp}: how many bytes of KV does one GPU cache per token?"
        ),
        _kv,
        lambda p, fn: fn(p["layers"], p["kv"], p["hd"], p["tp"]),
        _kv_steps,
        "B",
        ("KiB", "KB", "B"),
        source=N_("vLLM replicates KV heads when TP exceeds their count"),
    ),
    T(
        "l36.kv_pool",
        (*FN, "kv_pool_bytes"),
        "serving",
        1,
        36,
        N_(
            "A {gpu_gb} GB GPU, gpu_memory_utilization {util}, {w_gb} GB of weights on it, "
            "{rt_gb} GB of runtime (CUDA context, graphs, activations). How many bytes are left "
            "for the paged KV cache?"
        ),
        _pool,
        lambda p, fn: fn(p["gpu_gb"] * GB, p["util"], p["w_gb"] * GB, p["rt_gb"] * GB),
        _pool_steps,
        "B",
        ("GB", "GiB", "B"),
        source=N_("vLLM's memory profiling: pool = total × utilization − weights − runtime"),
    ),
    T(
        "l36.b_max",
        (*FN, "b_max"),
        "serving",
        2,
        36,
        N_(
            "A GPU's KV pool holds {pool_gb} GB; the model needs {kvt} B of KV per token on this "
            "GPU; each request is {s} tokens (prompt + generation). How many requests fit at "
            "once?"
        ),
        _bmax,
        lambda p, fn: fn(p["pool_gb"] * GB, p["kvt"], p["s"]),
        _bmax_steps,
        "1",
        rtol=1e-9,
        source=N_("whole requests: floor(pool / (KV per token × S_total))"),
    ),
    T(
        "l36.cluster_gpus",
        (*FN, "cluster_size"),
        "serving",
        3,
        36,
        N_(
            "A chat service: {qps} QPS, {sgen} generated tokens per request, TTFT {ttft} s, TPOT "
            "{tpot_ms} ms. One 8-GPU node sustains {node_tps} tokens/s and holds {bmax} "
            "concurrent requests. With 25 % burst headroom and 15 % redundancy on both, how many "
            "GPUs?"
        ),
        _cluster,
        lambda p, fn: fn(*_args(p))["gpus"],
        _cluster_steps,
        "1",
        rtol=1e-9,
        source=N_("Little's law for concurrency; throughput and memory sized separately, the larger wins"),
    ),
]

TEMPLATES += [
    T(
        "l36.concurrency",
        (*FN, "cluster_size"),
        "serving",
        1,
        36,
        N_(
            "A chat service: {qps} QPS, {sgen} generated tokens per request, TTFT {ttft} s, TPOT "
            "{tpot_ms} ms. How many requests are in flight on average (Little's law)?"
        ),
        _cluster,
        lambda p, fn: fn(*_args(p))["concurrency"],
        lambda p: [
            Step("=", N_("QPS"), p["qps"], "1/s"),
            Step("×", N_("lifetime TTFT + S_gen·TPOT"), p["ttft"] + p["sgen"] * p["tpot_ms"] / 1000, "s"),
        ],
        "1",
        rtol=0.001,
        source=N_("Little's law L = λW"),
    ),
    T(
        "l36.nodes_throughput",
        (*FN, "cluster_size"),
        "serving",
        2,
        36,
        N_(
            "{qps} QPS × {sgen} generated tokens; one node sustains {node_tps} tokens/s. With 25 "
            "% headroom and 15 % redundancy, how many nodes does throughput alone require?"
        ),
        _cluster,
        lambda p, fn: fn(*_args(p))["nodes_throughput"],
        lambda p: [
            Step(
                "=", N_("QPS·S_gen / node tokens/s × 1.25 × 1.15"), p["qps"] * p["sgen"] / p["node_tps"] * 1.25 * 1.15
            ),
            Step(
                "+",
                N_("round up to whole nodes"),
                math.ceil(p["qps"] * p["sgen"] / p["node_tps"] * 1.25 * 1.15 - 1e-9)
                - p["qps"] * p["sgen"] / p["node_tps"] * 1.25 * 1.15,
            ),
        ],
        "1",
        rtol=1e-9,
    ),
]

TEMPLATES += [
    T(
        "l36.nodes_memory",
        (*FN, "cluster_size"),
        "platform",
        3,
        36,
        N_(
            "{qps} QPS, {sgen} generated tokens per request, TTFT {ttft} s, TPOT {tpot_ms} ms; "
            "one node holds {bmax} concurrent requests in its KV cache. With 25 % headroom and 15 "
            "% redundancy, how many nodes does memory alone require?"
        ),
        _cluster,
        lambda p, fn: fn(*_args(p))["nodes_memory"],
        lambda p: [
            Step(
                "=",
                N_("nodes for the concurrency: ceil(QPS·(TTFT + S_gen·TPOT) / B_max)"),
                math.ceil(p["qps"] * (p["ttft"] + p["sgen"] * p["tpot_ms"] / 1000) / p["bmax"] - 1e-9),
            ),
            Step("×", N_("1.25 × 1.15"), 1.25 * 1.15),
            Step(
                "+",
                N_("round up"),
                math.ceil(
                    math.ceil(p["qps"] * (p["ttft"] + p["sgen"] * p["tpot_ms"] / 1000) / p["bmax"] - 1e-9) * 1.25 * 1.15
                    - 1e-9
                )
                - math.ceil(p["qps"] * (p["ttft"] + p["sgen"] * p["tpot_ms"] / 1000) / p["bmax"] - 1e-9) * 1.25 * 1.15,
            ),
        ],
        "1",
        rtol=1e-9,
    ),
    T(
        "l36.request_lifetime",
        (*FN, "cluster_size"),
        "serving",
        1,
        36,
        N_(
            "A request waits {ttft} s for its first token, then generates {sgen} tokens at "
            "{tpot_ms} ms each. How long does it stay in the system?"
        ),
        _cluster,
        lambda p, fn: fn(*_args(p))["t_life_s"],
        lambda p: [
            Step("=", N_("TTFT"), p["ttft"], "s"),
            Step("+", N_("S_gen × TPOT"), p["sgen"] * p["tpot_ms"] / 1000, "s"),
        ],
        "s",
        ("s", "ms", "min"),
        rtol=0.001,
    ),
]
