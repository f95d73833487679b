"""The format's first examples: three numeric templates (memory, FLOPs, communication) and one system design."""

from __future__ import annotations

import random

from grader.drill.template import Design, Params, Point, Step, Template, lecture
from grader.i18n import N_

L10 = lecture("01_性能工程与系统前置/10_AI_Infra性能工程方法论与三账本_FLOPs_显存_通信.md")
L13 = lecture("02_GPU硬件与集群互联/13_通信第一性原理与性能模型_AlphaBeta_Latency_Bandwidth.md")
L27 = lecture("04_大模型架构与显存建模/27_训练与推理显存账本_FLOPs推导与KV_Cache容量规划.md")
L44 = lecture("08_Post-Training与相邻Infra/44_AI_Infra大厂全真面试演练与系统设计题库.md")
GPUS = {"H100": 989e12, "A100": 312e12}  # dense bf16 peak FLOP/s


# --- memory: static training memory, 16 bytes per parameter ------------------------------------------------
def _static_params(rng: random.Random) -> Params:
    billions = rng.choice([1, 3, 7, 8, 13, 34, 70, 175, 405])
    return {"billions": billions, "n_params": billions * 10**9}


def _static_steps(p: Params) -> list[Step]:
    n = p["n_params"]
    return [
        Step("=", N_("bf16 weights: 2 B × Ψ"), 2 * n, "B"),
        Step("+", N_("bf16 gradients: 2 B × Ψ"), 2 * n, "B"),
        Step("+", N_("Adam in fp32: master weights 4 B + m 4 B + v 4 B, × Ψ"), 12 * n, "B"),
    ]


STATIC_MEMORY = Template(
    id="l27.static_training_memory",
    unit="l27_memory_ledger",
    topic="memory",
    difficulty=1,
    lecture=L27,
    prompt=N_(
        "Mixed-precision Adam training of a {billions}B-parameter model (bf16 weights and "
        "gradients, fp32 master weights, m and v), no sharding: how much static memory "
        "(weights + gradients + optimizer states, before activations)?"
    ),
    params=_static_params,
    solution=("l27_memory_ledger", "ledger", "training_memory"),
    answer=lambda p, fn: fn(p["n_params"])["total"],
    derivation=_static_steps,
    unit_of_answer="B",
    accept=("GB", "GiB", "TB", "TiB", "B"),
    rtol=0.01,
    source=N_("ZeRO paper (Rajbhandari et al. 2020): 2 + 2 + 12 = 16 bytes per parameter"),
)


# --- flops: days to train from 6ND ------------------------------------------------------------------------
def _days_params(rng: random.Random) -> Params:
    gpu = rng.choice(sorted(GPUS))
    billions, trillions = rng.choice([7, 13, 34, 70, 175, 405]), rng.choice([0.3, 1, 2, 4, 15])
    return {
        "billions": billions,
        "n_params": billions * 10**9,
        "trillions": trillions,
        "n_tokens": int(trillions * 10**12),
        "n_gpus": rng.choice([64, 128, 256, 512, 1024, 2048, 4096]),
        "gpu": gpu,
        "peak": GPUS[gpu],
        "peak_t": GPUS[gpu] / 1e12,
        "mfu": rng.choice([0.3, 0.35, 0.4, 0.45, 0.5]),
    }


def _days_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            N_("6 FLOPs per parameter per token (forward 2 + backward 4) × N × D"),
            6 * p["n_params"] * p["n_tokens"],
            "FLOP",
        ),
        Step("÷", N_("GPUs"), p["n_gpus"]),
        Step("÷", N_("{gpu} dense bf16 peak"), p["peak"], "FLOP/s", args={"gpu": p["gpu"]}),
        Step("÷", N_("MFU"), p["mfu"]),
        Step("÷", N_("seconds per day"), 86_400, "s/day"),
    ]


TRAINING_DAYS = Template(
    id="l10.training_days",
    unit="l10_three_ledgers",
    topic="flops",
    difficulty=2,
    lecture=L10,
    prompt=N_(
        "Pre-train a dense {billions}B-parameter model on {trillions}T tokens with {n_gpus} "
        "{gpu} GPUs ({peak_t:g} TFLOP/s dense bf16 each) at MFU {mfu:.0%}: how many days?"
    ),
    params=_days_params,
    solution=("l10_three_ledgers", "ledgers", "training_days"),
    answer=lambda p, fn: fn(p["n_params"], p["n_tokens"], p["n_gpus"], p["peak"], p["mfu"]),
    derivation=_days_steps,
    unit_of_answer="day",
    accept=("days", "h", "weeks"),
    rtol=0.02,
    source=N_("6ND (Kaplan et al. 2020); MFU as in PaLM (Chowdhery et al. 2022)"),
)


# --- communication: ring all-reduce time, alpha-beta model -----------------------------------------------
def _ring_params(rng: random.Random) -> Params:
    mib = rng.choice([16, 64, 128, 256, 512, 1024])
    alpha_us, beta_gb = rng.choice([0.8, 2, 5, 10]), rng.choice([25, 50, 100, 200, 450])
    return {
        "mib": mib,
        "message_bytes": mib * 2**20,
        "n_ranks": rng.choice([4, 8, 16, 32, 64]),
        "alpha_us": alpha_us,
        "alpha": alpha_us * 1e-6,
        "beta_gb": beta_gb,
        "beta": beta_gb * 1e9,
    }


def _ring_steps(p: Params) -> list[Step]:
    n, steps = p["n_ranks"], 2 * (p["n_ranks"] - 1)
    return [
        Step("=", N_("latency: 2(N-1) = {steps} steps × α"), steps * p["alpha"], "s", args={"steps": steps}),
        Step(
            "+",
            N_("bandwidth: 2(N-1)/N = {steps_n:.4g} × S / β"),
            steps / n * p["message_bytes"] / p["beta"],
            "s",
            args={"steps_n": steps / n},
        ),
    ]


RING_ALLREDUCE = Template(
    id="l13.ring_allreduce_time",
    unit="l13_alpha_beta",
    topic="communication",
    difficulty=2,
    lecture=L13,
    prompt=N_(
        "Ring all-reduce of {mib} MiB of gradients over {n_ranks} GPUs, α = {alpha_us:g} µs "
        "per step and β = {beta_gb:g} GB/s per link (alpha-beta model): how long does it "
        "take?"
    ),
    params=_ring_params,
    solution=("l13_alpha_beta", "alpha_beta", "ring_allreduce_time"),
    answer=lambda p, fn: fn(p["message_bytes"], p["n_ranks"], p["alpha"], p["beta"]),
    derivation=_ring_steps,
    unit_of_answer="s",
    accept=("ms", "us", "s"),
    rtol=0.01,
    source=N_("Thakur et al. 2005: reduce-scatter + all-gather, N-1 steps each"),
)

TEMPLATES = [STATIC_MEMORY, TRAINING_DAYS, RING_ALLREDUCE]


# --- system design: the 405B-on-1024-H100 training plan (lecture 44) ------------------------------------
PLAN_405B = Design(
    id="l44.plan_405b_1024_h100",
    unit="l44_interview",
    topic="parallelism",
    lecture=L44,
    minutes=15,
    prompt=N_(
        "Plan the pre-training of a dense 405B-parameter model on 1024 H100-80GB (8 per node, "
        "NVLink in the node, 400 Gb/s InfiniBand per GPU), global batch 8,388,608 tokens "
        "(1024 sequences of 8192), 2T tokens. Give the parallel layout (TP, PP, DP, ZeRO "
        "stage), the static memory per GPU, the time per step and the days to train at a "
        "realistic MFU, and the risks you would watch."
    ),
    points=(
        Point(
            N_("a layout whose product is 1024 with TP ≤ 8 (inside one node), e.g. TP8 PP8 DP16"),
            keywords=(
                ("TP8", "TP=8", "TP 8", "tensor parallel 8", "tp=8"),
                ("PP8", "PP=8", "PP 8", "pp=8", "pipeline parallel 8"),
            ),
        ),
        Point(
            N_("ZeRO-1 (optimizer states sharded over DP) or more"),
            keywords=(("ZeRO-1", "ZeRO 1", "ZeRO1", "ZeRO-2", "ZeRO-3", "FSDP"),),
        ),
        Point(
            N_("static memory per GPU ≈ 30 GB with TP8 PP8 DP16 ZeRO-1"),
            numbers=(30.07e9,),
            unit_of_answer="B",
            accept=("GB", "GiB"),
            rtol=0.05,
        ),
        Point(
            N_("FLOPs per step 6 × 405e9 × 8,388,608 ≈ 2.04e19"),
            numbers=(2.038e19,),
            unit_of_answer="FLOP",
            accept=("FLOP", "EFLOP", "PFLOP"),
            rtol=0.03,
        ),
        Point(
            N_("≈ 48 s per step at MFU 42 % on 989 TFLOP/s"),
            numbers=(47.9,),
            unit_of_answer="s",
            accept=("s",),
            rtol=0.08,
        ),
        Point(
            N_("why TP8 PP1 DP128 / TP16 do not fit: TP across nodes goes over InfiniBand, ZeRO-0 runs out of memory")
        ),
        Point(N_("activation memory: recomputation (selective or full) and micro-batch count for the pipeline bubble")),
        Point(N_("risks: stragglers and failures at 1024 GPUs, checkpoint cadence, NCCL timeouts, loss spikes")),
    ),
)

DESIGNS = [PLAN_405B]
