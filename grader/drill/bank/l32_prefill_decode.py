"""L32 · Prefill vs decode: where a step sits on the roofline, the decode step's floor, TPOT from token times."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T, gpu, shape
from grader.i18n import N_

FN = ("l32_prefill_decode", "inference")


def _roof(rng: random.Random) -> Params:
    return gpu(rng, {"t": rng.choice([1, 8, 32, 64, 128, 256, 512, 1024, 4096])})


def _roof_steps(p: Params) -> list[Step]:
    ai = 2 * p["t"] / 2
    if ai * p["bw"] < p["peak"]:
        return [
            Step("=", N_("intensity 2·T/2 B = {ai:g} FLOP/B (weights read once for T tokens)"), ai, args={"ai": ai}),
            Step("×", N_("HBM bandwidth: memory-bound"), p["bw"], "B/s"),
        ]
    return [
        Step(
            "=", N_("intensity {ai:g} FLOP/B is past the ridge: the compute roof"), p["peak"], "FLOP/s", args={"ai": ai}
        )
    ]


def _decode(rng: random.Random) -> Params:
    p = gpu(rng, shape(rng, {"batch": rng.choice([1, 8, 32, 64]), "ctx": rng.choice([0, 1024, 4096, 32768])}))
    p["n"] = {
        "LLaMA-2-7B": 6_738_415_616,
        "LLaMA-3-8B": 8_030_261_248,
        "LLaMA-3-70B": 70_553_706_496,
        "LLaMA-2-13B": 13_015_864_320,
        "Mistral-7B": 7_241_732_096,
        "Qwen2.5-72B": 72_706_203_648,
        "LLaMA-3.1-405B": 405_853_388_800,
    }[p["model"]]
    p["kvt"] = 2 * p["layers"] * p["kv"] * p["head_dim"] * 2
    p["billions"] = round(p["n"] / 1e9, 1)
    return p


def _decode_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("bf16 weights read once per step: 2 B × P"), 2 * p["n"], "B"),
        Step(
            "+",
            N_("every sequence's KV cache: batch × context × KV bytes per token"),
            p["batch"] * p["ctx"] * p["kvt"],
            "B",
        ),
        Step("÷", N_("HBM bandwidth"), p["bw"], "B/s"),
    ]


def _tok(rng: random.Random) -> Params:
    ttft = rng.choice([0.2, 0.35, 0.5, 1.2])
    n = rng.choice([8, 16, 64, 256])
    tpot = rng.choice([0.012, 0.02, 0.03, 0.05])
    times = [round(ttft + i * tpot + (0.004 if i % 3 == 2 else 0.0), 4) for i in range(n)]
    return {"times": times, "n": n, "first": times[0], "last": times[-1]}


TEMPLATES = [
    T(
        "l32.step_attainable",
        (*FN, "step_roofline"),
        "serving",
        2,
        32,
        N_(
            "A forward step of {t} tokens through a bf16 model's weights on an {gpu} ({peak_t:g} "
            "TFLOP/s, {bw_t:g} TB/s), counting only the weight reads: what FLOP/s can it attain "
            "at best?"
        ),
        _roof,
        lambda p, fn: fn(p["t"], p["peak"], p["bw"])["attainable_flops"],
        _roof_steps,
        "FLOP/s",
        ("TFLOPS", "FLOP/s"),
        source=N_("2 FLOPs per weight per token, 2 bytes per bf16 weight: intensity ≈ T"),
    ),
    T(
        "l32.step_bound",
        (*FN, "step_roofline"),
        "serving",
        1,
        32,
        N_(
            "A step of {t} tokens through a bf16 model on an {gpu} ({peak_t:g} TFLOP/s, {bw_t:g} "
            "TB/s): is it memory- or compute-bound?"
        ),
        _roof,
        lambda p, fn: fn(p["t"], p["peak"], p["bw"])["bound"],
        lambda p: [
            Step("=", N_("intensity ≈ T FLOP/B"), p["t"]),
            Step("=", N_("ridge peak / bandwidth"), p["peak"] / p["bw"]),
        ],
        kind="choice",
        options=lambda p: [N_("memory"), N_("compute")],
    ),
    T(
        "l32.decode_step_floor",
        (*FN, "decode_step_seconds"),
        "serving",
        3,
        32,
        N_(
            "{model} ({billions}B parameters, bf16, {kvt} B of KV per token) decodes one token "
            "for {batch} sequences of {ctx} cached tokens on one {gpu} ({bw_t:g} TB/s). What is "
            "the lower bound on the step's time?"
        ),
        _decode,
        lambda p, fn: fn(p["n"], p["batch"], p["ctx"], p["kvt"], p["bw"]),
        _decode_steps,
        "s",
        ("ms", "s", "us"),
        source=N_("decode is memory-bound: the step reads the weights once and every KV cache"),
    ),
    T(
        "l32.tpot",
        (*FN, "request_metrics"),
        "serving",
        2,
        32,
        N_(
            "A request arrives at t = 0; its {n} tokens come out at t = {first} s (first) … "
            "{last} s (last). What is its TPOT (time per output token after the first)?"
        ),
        _tok,
        lambda p, fn: fn(0.0, p["times"])["tpot"],
        lambda p: [
            Step("=", N_("E2E − TTFT = last − first"), p["last"] - p["first"], "s"),
            Step("÷", N_("N − 1 gaps"), p["n"] - 1),
        ],
        "s",
        ("ms", "s"),
        rtol=0.005,
        source=N_("vLLM benchmark definitions: TPOT = (E2E − TTFT)/(N − 1)"),
    ),
]


def _lat(rng: random.Random) -> Params:
    values = [rng.choice([80, 95, 110, 120, 150, 180, 240, 400, 900]) for _ in range(rng.choice([7, 10, 12, 20]))]
    return {"values": values, "shown": ", ".join(map(str, values)), "q": rng.choice([50, 90, 95, 99])}


def _lat_steps(p: Params) -> list[Step]:
    import math

    rank = math.ceil(p["q"] / 100 * len(p["values"]))
    return [
        Step(
            "=",
            N_("the ceil({q}/100 × {len_values}) = {rank}-th smallest value"),
            sorted(p["values"])[rank - 1],
            "ms",
            args={"q": p["q"], "len_values": len(p["values"]), "rank": rank},
        )
    ]


def _good(rng: random.Random) -> Params:
    reqs = [
        {"ttft": rng.choice([0.2, 0.4, 0.6, 0.9, 1.5]), "tpot": rng.choice([0.02, 0.03, 0.05, 0.08])}
        for _ in range(rng.choice([8, 10, 12]))
    ]
    return {
        "reqs": reqs,
        "shown": "; ".join(f"{r['ttft']:g} s / {r['tpot'] * 1000:g} ms" for r in reqs),
        "ttft_slo": rng.choice([0.5, 1.0]),
        "tpot_slo": rng.choice([0.03, 0.05]),
        "window": rng.choice([2, 4, 5]),
    }


TEMPLATES += [
    T(
        "l32.percentile_nearest_rank",
        (*FN, "percentile_nearest_rank"),
        "serving",
        1,
        32,
        N_("TTFT samples (ms): {shown}. What is the P{q} by nearest rank?"),
        _lat,
        lambda p, fn: fn(p["values"], p["q"]) / 1000,
        lambda p: [Step(s.op, s.label, s.value / 1000, "s", s.args) for s in _lat_steps(p)],
        "s",
        ("ms", "s"),
        rtol=1e-6,
        source=N_("nearest-rank percentile (no interpolation), as the course's units use"),
    ),
    T(
        "l32.goodput",
        (*FN, "goodput_rps"),
        "serving",
        2,
        32,
        N_(
            "In a {window} s window these requests finished (TTFT / TPOT): {shown}. SLOs: TTFT ≤ "
            "{ttft_slo:g} s and TPOT ≤ {tpot_slo:g} s. What is the goodput in requests per "
            "second?"
        ),
        _good,
        lambda p, fn: fn(p["reqs"], p["ttft_slo"], p["tpot_slo"], p["window"]),
        lambda p: [
            Step(
                "=",
                N_("requests meeting both SLOs"),
                sum(1 for r in p["reqs"] if r["ttft"] <= p["ttft_slo"] and r["tpot"] <= p["tpot_slo"]),
            ),
            Step("÷", N_("window"), p["window"], "s"),
        ],
        "1",
        rtol=1e-6,
        source=N_("DistServe (Zhong et al. 2024): goodput counts only requests within their SLOs"),
    ),
]

TEMPLATES += [
    T(
        "l32.peak_fraction",
        (*FN, "step_roofline"),
        "serving",
        2,
        32,
        N_(
            "A step of {t} tokens through a bf16 model on an {gpu} ({peak_t:g} TFLOP/s, {bw_t:g} "
            "TB/s), weights only: what fraction of the peak can it reach at best?"
        ),
        _roof,
        lambda p, fn: fn(p["t"], p["peak"], p["bw"])["peak_fraction"],
        lambda p: [*_roof_steps(p), Step("÷", N_("peak"), p["peak"], "FLOP/s")],
        "ratio",
        ("%",),
        rtol=0.005,
    ),
]
