"""L44 · The interview whiteboard: a plan's static memory and verdict, the run's time and cost, hang triage."""

from __future__ import annotations

import math
import random

from grader.constants import GPUS
from grader.drill.bank._kit import GB, GiB, Params, Step, T
from grader.i18n import N_, _

FN = ("l44_interview", "interview")
H100 = GPUS["H100-SXM"]
BILLIONS = [70, 175, 405]


def _plan(rng: random.Random) -> Params:
    billions, gpus = rng.choice(BILLIONS), rng.choice([256, 512, 1024, 2048])
    tp = rng.choice([4, 8, 8, 16])
    pp = rng.choice([p for p in (1, 2, 4, 8, 16) if tp * p <= gpus])
    return {
        "billions": billions,
        "n": billions * 10**9,
        "gpus": gpus,
        "tp": tp,
        "pp": pp,
        "dp": gpus // (tp * pp),
        "z": rng.choice([0, 1, 1, 2, 3]),
        "act_gib": rng.choice([10, 20, 30]),
    }


def _static_steps(p: Params) -> list[Step]:
    local = -(-p["n"] // (p["tp"] * p["pp"]))
    shard = -(-local // p["dp"])
    z = p["z"]
    return [
        Step(
            "=",
            N_("bf16 weights: 2 B × {share3}"),
            2 * (shard if z >= 3 else local),
            "B",
            args={"share3": N_("Ψ/(TP·PP·DP)") if z >= 3 else N_("Ψ/(TP·PP)")},
        ),
        Step(
            "+",
            N_("bf16 gradients: 2 B × {share2}"),
            2 * (shard if z >= 2 else local),
            "B",
            args={"share2": N_("Ψ/(TP·PP·DP)") if z >= 2 else N_("Ψ/(TP·PP)")},
        ),
        Step(
            "+",
            N_("Adam states: 12 B × {share1}"),
            12 * (shard if z >= 1 else local),
            "B",
            args={"share1": N_("Ψ/(TP·PP·DP)") if z >= 1 else N_("Ψ/(TP·PP)")},
        ),
    ]


VERDICTS = [N_("passes"), N_("fails: out of memory"), N_("fails: TP·PP·DP is not the GPU count"), N_("fails: both")]


def _verdict_plan(rng: random.Random) -> Params:
    p = _plan(rng)
    p["dp"] = rng.choice([p["dp"], p["dp"], max(1, p["dp"] // 2)])
    return p


def _verdict(p: Params, fn) -> str:
    errors = fn(p["n"], p["gpus"], p["tp"], p["pp"], p["dp"], p["z"], p["act_gib"] * GiB)["errors"]
    return {(): VERDICTS[0], ("oom",): VERDICTS[1], ("gpu_count",): VERDICTS[2], ("gpu_count", "oom"): VERDICTS[3]}[
        tuple(errors)
    ]


def _verdict_steps(p: Params) -> list[Step]:
    static = sum(s.value for s in _static_steps(p))
    return [
        Step(
            "=",
            N_("TP·PP·DP = {tp_pp_dp} vs {gpus} GPUs"),
            p["tp"] * p["pp"] * p["dp"],
            args={"tp_pp_dp": p["tp"] * p["pp"] * p["dp"], "gpus": p["gpus"]},
        ),
        Step(
            "=",
            N_("peak = static {static_GB:.2f} GB + activations {act_gib} GiB, vs 80 GiB"),
            static + p["act_gib"] * GiB,
            "B",
            args={"static_GB": static / GB, "act_gib": p["act_gib"]},
        ),
    ]


def _run(rng: random.Random) -> Params:
    billions = rng.choice([8, 70, 175, 405])
    seqs, seq = rng.choice([512, 1024, 2048]), rng.choice([4096, 8192])
    return {
        "billions": billions,
        "n": billions * 10**9,
        "seqs": seqs,
        "seq": seq,
        "tokens": seqs * seq,
        "trillions": rng.choice([1, 2, 4, 15]),
        "gpus": rng.choice([512, 1024, 2048, 4096]),
        "mfu": rng.choice([0.35, 0.4, 0.42, 0.5]),
        "price": rng.choice([180, 250, 320]),
    }


def _run_args(p: Params) -> tuple:
    return p["n"], p["tokens"], p["trillions"] * 10**12, p["gpus"], p["mfu"]


def _flops_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("6 FLOPs per parameter per token"), 6, "FLOP"),
        Step("×", N_("parameters"), p["n"]),
        Step("×", N_("tokens per step: {seqs} × {seq}"), p["tokens"], args={"seqs": p["seqs"], "seq": p["seq"]}),
    ]


def _step_s(p: Params) -> float:
    return 6 * p["n"] * p["tokens"] / (p["gpus"] * H100.bf16_flops * p["mfu"])


def _step_steps(p: Params) -> list[Step]:
    return [
        *_flops_steps(p),
        Step("÷", N_("GPUs"), p["gpus"]),
        Step("÷", N_("H100 dense bf16 peak"), H100.bf16_flops, "FLOP/s"),
        Step("÷", N_("MFU"), p["mfu"]),
    ]


def _n_steps(p: Params) -> int:
    return math.ceil(p["trillions"] * 10**12 / p["tokens"])


def _count_steps(p: Params) -> list[Step]:
    exact = p["trillions"] * 10**12 / p["tokens"]
    return [
        Step("=", N_("total tokens"), p["trillions"] * 10**12),
        Step("÷", N_("tokens per step"), p["tokens"]),
        Step("+", N_("a partial last step is a step: round up"), math.ceil(exact) - exact),
    ]


def _days_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("whole steps"), _n_steps(p)),
        Step("×", N_("seconds per step: 6·Ψ·tokens / (N · peak · MFU)"), _step_s(p), "s"),
        Step("÷", N_("seconds per day"), 86_400),
    ]


def _cost_steps(p: Params) -> list[Step]:
    return [
        *_days_steps(p),
        Step("×", N_("hours per day"), 24),
        Step("×", N_("8-GPU nodes"), -(-p["gpus"] // 8)),
        Step("×", N_("price per node-hour"), p["price"]),
    ]


STACK = {
    "grads": ("all_reduce", "train.py:88"),
    "eval": ("all_reduce", "train.py:151"),
    "barrier": ("barrier", "train.py:140"),
    "ckpt": (None, "checkpoint.py:42"),
    "loader": (None, "data.py:77"),
}
RUN_PROMPT = {
    "grads": N_("all_reduce called from train.py:88 (gradient sync)"),
    "eval": N_("all_reduce called from train.py:151 (evaluation metrics)"),
    "barrier": N_("barrier called from train.py:140 (before a checkpoint)"),
    "ckpt": N_("no collective: torch.save writing a checkpoint (checkpoint.py:42)"),
    "loader": N_("no collective: waiting on the data loader (data.py:77)"),
}
TRIAGE = {
    "straggler_or_network": N_("every rank waits in the same collective: a straggler or the network"),
    "straggler": N_("a rank has not reached the collective: a straggler"),
    "divergence": N_("ranks wait in collectives that can never match: control flow diverged"),
    "no_collective": N_("no rank is in a collective: not a collective hang"),
}


def _listing(where: list[str], skip: str = "") -> str:
    """The ranks' py-spy dumps in the learner's language (the English text is also the stored ``listing``)."""
    return "; ".join(_("rank {r}: {dump}").format(r=r, dump=_(RUN_PROMPT[w])) for r, w in enumerate(where) if w != skip)


def _hang(rng: random.Random) -> Params:
    n = rng.choice([4, 8, 16])
    kind = rng.choice(["same", "same", "idle", "diverge"])
    where = ["grads"] * n
    if kind != "same":
        odd = rng.sample(range(n), rng.choice([1, 1, 2]))
        for r in odd:
            where[r] = rng.choice(["ckpt", "loader"] if kind == "idle" else ["eval", "barrier"])
    return {"n": n, "where": where, "listing": "; ".join(f"rank {r}: {RUN_PROMPT[w]}" for r, w in enumerate(where))}


def _dump(where: str) -> str:
    coll, site = STACK[where]
    file, line = site.split(":")
    frames = (
        [
            f"    {coll} (torch/distributed/distributed_c10d.py:2195)",
            "    wrapper (torch/distributed/c10d_logger.py:75)",
        ]
        if coll
        else ["    write (torch/serialization.py:496)"]
    )
    frames += [f"    step ({file}:{line})", "    <module> (train.py:210)"]
    return 'Process 1: python train.py\n\nThread 1 (active): "MainThread"\n' + "\n".join(frames) + "\n"


def _triage(p: Params, fn) -> str:
    return TRIAGE[fn({r: _dump(w) for r, w in enumerate(p["where"])})["verdict"]]


def _triage_steps(p: Params) -> list[Step]:
    groups: dict[str, list[int]] = {}
    for r, w in enumerate(p["where"]):
        groups.setdefault(w, []).append(r)
    return [
        Step("=", N_("{RUN_PROMPT_w}: ranks {rs}"), len(rs), args={"RUN_PROMPT_w": RUN_PROMPT[w], "rs": rs})
        for w, rs in groups.items()
    ]


TEMPLATES = [
    T(
        "l44.plan_static_bytes",
        (*FN, "plan_static_bytes"),
        "parallelism",
        2,
        44,
        N_(
            "A dense {billions}B model on {gpus} GPUs, plan TP{tp} PP{pp} DP{dp} with ZeRO-{z}, "
            "mixed-precision Adam (16 B/param). Static memory (weights + gradients + optimizer) "
            "per GPU?"
        ),
        _plan,
        lambda p, fn: fn(p["n"], p["tp"], p["pp"], p["dp"], p["z"])["total"],
        _static_steps,
        "B",
        ("GB", "GiB", "B"),
        source=N_("TP·PP split the model, ZeRO shards over DP"),
    ),
    T(
        "l44.judge_plan",
        (*FN, "judge_plan"),
        "parallelism",
        2,
        44,
        N_(
            "A dense {billions}B model on {gpus} H100-80GB, plan TP{tp} PP{pp} DP{dp} with "
            "ZeRO-{z}, {act_gib} GiB of activations per GPU. Does the plan pass?"
        ),
        _verdict_plan,
        _verdict,
        _verdict_steps,
        kind="choice",
        options=lambda p: list(VERDICTS),
        source=N_("the lecture's judge: TP·PP·DP = N, static + activations ≤ 80 GiB"),
    ),
    T(
        "l44.flops_per_step",
        (*FN, "training_run"),
        "flops",
        1,
        44,
        N_(
            "A dense {billions}B model, global batch {seqs} sequences of {seq} tokens: how many "
            "FLOPs per training step?"
        ),
        _run,
        lambda p, fn: fn(*_run_args(p))["flops_per_step"],
        _flops_steps,
        "FLOP",
        ("EFLOP", "PFLOP", "FLOP"),
        source=N_("6·Ψ per token"),
    ),
    T(
        "l44.step_seconds",
        (*FN, "training_run"),
        "flops",
        2,
        44,
        N_(
            "A dense {billions}B model, {seqs} × {seq} tokens per step, {gpus} H100 (989 TFLOP/s "
            "dense bf16) at MFU {mfu:.0%}: how long is a step?"
        ),
        _run,
        lambda p, fn: fn(*_run_args(p))["step_s"],
        _step_steps,
        "s",
        ("s", "ms", "min"),
        rtol=0.01,
    ),
    T(
        "l44.steps",
        (*FN, "training_run"),
        "flops",
        1,
        44,
        N_(
            "Pre-training on {trillions}T tokens with {seqs} sequences of {seq} tokens per step: "
            "how many optimizer steps?"
        ),
        _run,
        lambda p, fn: fn(*_run_args(p))["steps"],
        _count_steps,
        "1",
        rtol=1e-5,
    ),
    T(
        "l44.run_days",
        (*FN, "training_run"),
        "flops",
        3,
        44,
        N_(
            "A dense {billions}B model, {seqs} × {seq} tokens per step, {trillions}T tokens, "
            "{gpus} H100 at MFU {mfu:.0%}: how many days of training?"
        ),
        _run,
        lambda p, fn: fn(*_run_args(p))["days"],
        _days_steps,
        "day",
        ("days", "h", "weeks"),
        rtol=0.01,
    ),
    T(
        "l44.run_cost",
        (*FN, "training_run"),
        "platform",
        3,
        44,
        N_(
            "A dense {billions}B model, {seqs} × {seq} tokens per step, {trillions}T tokens, "
            "{gpus} H100 (8 per node) at MFU {mfu:.0%}, nodes rented at {price} per node-hour: "
            "what does the run cost (in currency units)?"
        ),
        _run,
        lambda p, fn: fn(*_run_args(p), node_hour_price=float(p["price"]))["cost"],
        _cost_steps,
        "1",
        rtol=0.01,
    ),
    T(
        "l44.hang_triage",
        (*FN, "triage_hang"),
        "operations",
        2,
        44,
        lambda p: _(
            "NCCL watchdog timeout; py-spy dumps of the {n} ranks' main threads show: {listing}. What is the verdict?"
        ).format(n=p["n"], listing=_listing(p["where"])),
        _hang,
        _triage,
        _triage_steps,
        kind="choice",
        options=lambda p: list(TRIAGE.values()),
        source=N_("the lecture's decision tree, step 1: compare call sites, not only collective names"),
    ),
]


def _one_odd(rng: random.Random) -> Params:
    n = rng.choice([4, 8, 16, 32])
    where = ["grads"] * n
    odd = rng.randrange(n)
    where[odd] = rng.choice(["eval", "barrier", "ckpt", "loader"])
    return {
        "n": n,
        "where": where,
        "odd": odd,
        "listing": "; ".join(f"rank {r}: {RUN_PROMPT[w]}" for r, w in enumerate(where) if w != "grads"),
        "rest": f"every other rank: {RUN_PROMPT['grads']}",
    }


TEMPLATES += [
    T(
        "l44.hang_suspect",
        (*FN, "triage_hang"),
        "operations",
        1,
        44,
        lambda p: _(
            "NCCL watchdog timeout on {n} ranks. py-spy dumps: {listing}; {rest}. Which rank do you look at first?"
        ).format(
            n=p["n"],
            listing=_listing(p["where"], skip="grads"),
            rest=_("every other rank: {dump}").format(dump=_(RUN_PROMPT["grads"])),
        ),
        _one_odd,
        lambda p, fn: fn({r: _dump(w) for r, w in enumerate(p["where"])})["suspects"][0],
        lambda p: [Step("=", N_("the only rank outside the main group's call site"), p["odd"])],
        "1",
        rtol=1e-9,
    ),
    T(
        "l44.plan_static_405b_pp",
        (*FN, "plan_static_bytes"),
        "memory",
        2,
        44,
        N_("405B on 1024 GPUs with TP8 and ZeRO-1: static memory per GPU if PP = {pp} (DP = 1024 / (8·PP))?"),
        lambda rng: (lambda pp: {"pp": pp, "dp": 1024 // (8 * pp), "n": 405 * 10**9, "tp": 8, "z": 1})(
            rng.choice([1, 2, 4, 8, 16])
        ),
        lambda p, fn: fn(p["n"], 8, p["pp"], p["dp"], 1)["total"],
        _static_steps,
        "B",
        ("GB", "GiB", "B"),
    ),
]

PP_CHOICES = ["PP = 1", "PP = 2", "PP = 4", "PP = 8", "PP = 16", N_("none of them")]


def _minpp(rng: random.Random) -> Params:
    return {
        "billions": rng.choice([175, 405]),
        "gpus": rng.choice([512, 1024, 2048]),
        "z": rng.choice([0, 1]),
        "act_gib": rng.choice([10, 20, 30, 40]),
    }


def _minpp_answer(p: Params, fn) -> str:
    for pp, label in zip((1, 2, 4, 8, 16), PP_CHOICES, strict=False):
        if fn(p["billions"] * 10**9, p["gpus"], 8, pp, p["gpus"] // (8 * pp), p["z"], p["act_gib"] * GiB)["passed"]:
            return label
    return PP_CHOICES[-1]


def _minpp_steps(p: Params) -> list[Step]:
    out = []
    for pp in (1, 2, 4, 8, 16):
        q = {"n": p["billions"] * 10**9, "tp": 8, "pp": pp, "dp": p["gpus"] // (8 * pp), "z": p["z"]}
        static = sum(s.value for s in _static_steps(q))
        out.append(
            Step(
                "=",
                N_("PP = {pp}: static {static_GB:.1f} GB + {act_gib} GiB"),
                static + p["act_gib"] * GiB,
                "B",
                args={"pp": pp, "static_GB": static / GB, "act_gib": p["act_gib"]},
            )
        )
    return out


TEMPLATES += [
    T(
        "l44.min_pp_that_fits",
        (*FN, "judge_plan"),
        "parallelism",
        3,
        44,
        N_(
            "A dense {billions}B model on {gpus} H100-80GB, TP = 8 inside each node, ZeRO-{z}, DP "
            "= {gpus} / (8·PP), {act_gib} GiB of activations per GPU. What is the smallest "
            "pipeline depth whose plan fits in 80 GiB?"
        ),
        _minpp,
        _minpp_answer,
        _minpp_steps,
        kind="choice",
        options=lambda p: list(PP_CHOICES),
        source=N_("the lecture's judge"),
    ),
]
