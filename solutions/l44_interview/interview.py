"""L44 · The interview whiteboard: judge a 3D-parallel plan, cost the run, triage a NCCL hang from stacks.

Lecture 44 (08_Post-Training与相邻Infra/44_AI_Infra大厂全真面试演练与系统设计题库.md), question 1 and
lab 1 (405B on 1024 H100s), question 2 (the NCCL watchdog-timeout decision tree).

1. Static memory of a plan. Tensor and pipeline parallelism split the model: a GPU holds
   ceil(Ψ / (TP·PP)) parameters (the largest stage). ZeRO then shards over the DP group, one term per
   stage (optimizer from 1, gradients from 2, weights from 3), ceil(local / DP) parameters a shard.
   405B, TP8 PP8 DP16 ZeRO-1: 12,656,250,000 + 12,656,250,000 + 4,746,093,756 = 30,058,593,756 B (shards round up).
2. The judge: TP·PP·DP must equal the GPU count (error), TP beyond one node's GPUs puts tensor
   parallelism on the slow network (warning), static + activations above the GPU's memory is OOM (error).
3. The run: 6·Ψ FLOPs per trained token; a step takes FLOPs / (N · peak · MFU); the run has
   ceil(total tokens / tokens per step) steps; it rents ceil(N / GPUs per node) nodes by the hour.
   405B, 8,388,608 tokens/step, 1024 H100 at MFU 0.42: 47.92 s/step, 238,419 steps, 132.2 days.
4. The hang: py-spy dumps of every rank. All ranks blocked in one collective called from one line of
   the training code → the job is waiting on the wire or on a slow peer (straggler or network). A
   rank in another collective, or in the same collective called from another line → control flow
   diverged: the collectives can never match. A rank in no collective while the others wait → it
   has not arrived: a straggler (slow GPU, data loader, checkpoint I/O).

Conventions: exact int bytes and FLOPs; seconds, days and money as floats; invalid arguments raise
ValueError naming the argument.
"""

from __future__ import annotations

import math
import re

from grader.constants import GPUS

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

H100 = GPUS["H100-SXM"]
ZERO_STAGES = (0, 1, 2, 3)
SECONDS_PER_DAY = 86_400
# torch.distributed calls that block until every rank of the group joins
COLLECTIVES = frozenset({
    "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "reduce_scatter",
    "reduce_scatter_tensor", "broadcast", "broadcast_object_list", "barrier", "all_to_all",
    "all_to_all_single", "reduce", "gather", "scatter", "send", "recv", "monitored_barrier",
})
THREAD_LINE = re.compile(r'^Thread (\S+) \(([\w+]+)\): "(.*)"\s*$')
FRAME_LINE = re.compile(r"^ {4}(\S.*?) \((.+):(\d+)\)\s*$")  # py-spy: 4 spaces, function (file:line)
TORCH_FILE = re.compile(r"(^|/)torch/")


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_stage(zero_stage: object) -> int:
    if isinstance(zero_stage, bool) or zero_stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage must be one of {ZERO_STAGES}, got {zero_stage!r}")
    return int(zero_stage)


def _check_real(name: str, value: object, low: float, high: float = math.inf, *, low_open: bool = True) -> float:
    """A finite real in (low, high] (or [low, high] with low_open=False); bools refused."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value > high or value < low or (low_open and value == low):
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must be in {bracket}{low}, {high}], got {value!r}")
    return float(value)


def _check_dump(name: str, text: object) -> str:
    if not isinstance(text, str):
        raise ValueError(f"{name} must be the text of a py-spy dump (str), got {type(text).__name__}")
    return text


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------------------------------------
# 1. Static memory of a 3D-parallel plan
# ---------------------------------------------------------------------------------------------


def plan_static_bytes(
    n_params: int, tp: int, pp: int, dp: int, zero_stage: int,
    weight_bytes: int = 2, grad_bytes: int = 2, optimizer_bytes: int = 12,
) -> dict[str, int]:
    """Per-GPU static bytes: ``{"weights", "grads", "optimizer", "total"}``.

    local = ceil(Ψ / (TP·PP)) parameters; shard = ceil(local / DP). Each term holds ``shard`` from its
    ZeRO stage on (optimizer 1, gradients 2, weights 3), ``local`` before.
    405e9, TP8 PP8 DP16, ZeRO-1: 12,656,250,000 / 12,656,250,000 / 4,746,093,756, total 30,058,593,756.
    """
    # TODO: validate, split the model over TP·PP, then shard each term over DP from its ZeRO stage on.
    ### BEGIN SOLUTION
    n = check_int("n_params", n_params)
    tp, pp, dp = check_int("tp", tp, 1), check_int("pp", pp, 1), check_int("dp", dp, 1)
    stage = _check_stage(zero_stage)
    w, g = check_int("weight_bytes", weight_bytes), check_int("grad_bytes", grad_bytes)
    o = check_int("optimizer_bytes", optimizer_bytes)
    local = _ceil_div(n, tp * pp)  # the largest model-parallel slice
    shard = _ceil_div(local, dp)
    parts = {
        "weights": (shard if stage >= 3 else local) * w,
        "grads": (shard if stage >= 2 else local) * g,
        "optimizer": (shard if stage >= 1 else local) * o,
    }
    return {**parts, "total": sum(parts.values())}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The plan judge
# ---------------------------------------------------------------------------------------------


def judge_plan(
    n_params: int, n_gpus: int, tp: int, pp: int, dp: int, zero_stage: int, activation_bytes: int,
    gpus_per_node: int = 8, gpu_memory_bytes: int = H100.hbm_bytes,
) -> dict:
    """Verdict on a plan: ``{"passed", "errors", "warnings", "static_bytes", "peak_bytes", "headroom_bytes"}``.

    errors (sorted): ``"gpu_count"`` when TP·PP·DP != n_gpus, ``"oom"`` when peak > gpu_memory_bytes
    (peak = static total of :func:`plan_static_bytes` with the default 2/2/12 bytes + activation_bytes;
    a peak equal to the memory fits). warnings: ``"tp_crosses_node"`` when TP > gpus_per_node.
    passed = no errors. headroom = memory − peak (negative when OOM).
    405B on 1024 H100 (80 GiB), 20 GiB of activations: TP16 PP1 DP64 ZeRO-0 → errors ["oom"],
    warnings ["tp_crosses_node"]; TP8 PP8 DP16 ZeRO-1 → passed, static 30,058,593,756 B.
    """
    # TODO: validate, then the GPU-count check, the node-boundary warning and the memory verdict.
    ### BEGIN SOLUTION
    gpus, act = check_int("n_gpus", n_gpus, 1), check_int("activation_bytes", activation_bytes)
    per_node, memory = check_int("gpus_per_node", gpus_per_node, 1), check_int("gpu_memory_bytes", gpu_memory_bytes, 1)
    static = plan_static_bytes(n_params, tp, pp, dp, zero_stage)["total"]
    peak = static + act
    errors = []
    if tp * pp * dp != gpus:
        errors.append("gpu_count")
    if peak > memory:
        errors.append("oom")
    warnings = ["tp_crosses_node"] if tp > per_node else []
    return {
        "passed": not errors, "errors": sorted(errors), "warnings": warnings,
        "static_bytes": static, "peak_bytes": peak, "headroom_bytes": memory - peak,
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Step time, days and cost
# ---------------------------------------------------------------------------------------------


def training_run(
    n_params: int, tokens_per_step: int, total_tokens: int, n_gpus: int, mfu: float,
    peak_flops: float = H100.bf16_flops, gpus_per_node: int = 8, node_hour_price: float = 180.0,
) -> dict:
    """``{"flops_per_step", "step_s", "steps", "days", "cost"}`` of a pre-training run.

    flops_per_step = 6·Ψ·tokens (int); step_s = flops / (n_gpus · peak · mfu); steps =
    ceil(total / tokens_per_step); days = steps · step_s / 86,400; cost = days · 24 h ·
    ceil(n_gpus / gpus_per_node) nodes · node_hour_price. mfu is a fraction in (0, 1].
    405e9, 8,388,608, 2e12, 1024 GPUs, 0.42: 2.0384e19 FLOPs, 47.92 s, 238,419 steps, 132.24 days, 73.1 M at 180/h.
    """
    # TODO: validate, then FLOPs per step, seconds per step, whole steps, days and the node-hour bill.
    ### BEGIN SOLUTION
    n, tokens = check_int("n_params", n_params), check_int("tokens_per_step", tokens_per_step, 1)
    total, gpus = check_int("total_tokens", total_tokens), check_int("n_gpus", n_gpus, 1)
    mfu = _check_real("mfu", mfu, 0.0, 1.0)
    peak = _check_real("peak_flops", peak_flops, 0.0)
    nodes = _ceil_div(gpus, check_int("gpus_per_node", gpus_per_node, 1))
    price = _check_real("node_hour_price", node_hour_price, 0.0, low_open=False)
    flops = 6 * n * tokens
    step_s = flops / (gpus * peak * mfu)
    steps = _ceil_div(total, tokens)  # a partial last step is still a step
    days = steps * step_s / SECONDS_PER_DAY
    return {"flops_per_step": flops, "step_s": step_s, "steps": steps, "days": days,
            "cost": days * 24 * nodes * price}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. NCCL hang triage from py-spy dumps
# ---------------------------------------------------------------------------------------------


def main_thread_stack(dump: str) -> list[tuple[str, str, int]]:
    """The frames of the thread named ``MainThread`` in a ``py-spy dump``, innermost first.

    A thread starts at ``Thread <id> (<state>): "<name>"``; its frames are the lines indented by four
    spaces, ``function (file:line)``. Deeper lines (``--locals``: ``Arguments:``, values) and other
    threads are skipped. ValueError naming ``dump`` if there is no MainThread.
    """
    # TODO: find the MainThread header, then collect its four-space frame lines until the next thread.
    ### BEGIN SOLUTION
    frames: list[tuple[str, str, int]] = []
    inside = found = False
    for line in _check_dump("dump", dump).splitlines():
        header = THREAD_LINE.match(line)
        if header:
            inside = header.group(3) == "MainThread" and not found
            found = found or inside
            continue
        frame = FRAME_LINE.match(line) if inside else None
        if frame:
            frames.append((frame.group(1), frame.group(2), int(frame.group(3))))
    if not found:
        raise ValueError("dump has no MainThread: pass the whole output of `py-spy dump --pid <pid>`")
    return frames
    ### END SOLUTION


def hang_call_site(frames: list[tuple[str, str, int]]) -> dict:
    """``{"collective", "site"}`` of a stack (innermost first).

    collective: the innermost frame whose function is in ``COLLECTIVES`` and whose file is under
    ``torch/`` (None when the rank is in no collective). site: ``"file:line"`` of the first frame
    outward from it whose file is not under ``torch/`` (the training code's call; without a
    collective, the innermost such frame; None if every frame is torch's).
    """
    # TODO: find the innermost torch collective frame, then the first non-torch frame outward from it.
    ### BEGIN SOLUTION
    start, collective = 0, None
    for i, (function, file, _) in enumerate(frames):
        if function in COLLECTIVES and TORCH_FILE.search(file):
            start, collective = i, function
            break
    site = next((f"{file}:{line}" for _, file, line in frames[start:] if not TORCH_FILE.search(file)), None)
    return {"collective": collective, "site": site}
    ### END SOLUTION


def triage_hang(dumps: dict[int, str]) -> dict:
    """``{"verdict", "suspects", "sites"}`` from every rank's py-spy dump (``{rank: dump text}``).

    sites: ``{"<collective> <file:line>": [ranks]}`` for the ranks inside a collective. The main
    group is the largest site (a tie goes to the site of the lowest rank). verdict:
    ``"straggler_or_network"`` when every rank is at one site (suspects []); ``"straggler"`` when
    one site holds every rank in a collective and the others are in none (suspects: those);
    ``"divergence"`` when two sites or more exist (suspects: every rank outside the main group);
    ``"no_collective"`` when no rank is in a collective (suspects []). Suspects sorted.
    """
    # TODO: call site of every rank, group them, then the verdict from the number of groups and idle ranks.
    ### BEGIN SOLUTION
    if not isinstance(dumps, dict) or not dumps:
        raise ValueError(f"dumps must be a non-empty dict {{rank: py-spy dump}}, got {dumps!r}")
    sites: dict[str, list[int]] = {}
    idle = []
    for rank in sorted(dumps, key=lambda r: check_int("dumps (a rank)", r)):
        where = hang_call_site(main_thread_stack(_check_dump(f"dumps[{rank}]", dumps[rank])))
        if where["collective"] is None:
            idle.append(rank)
        else:
            sites.setdefault(f"{where['collective']} {where['site']}", []).append(rank)
    if not sites:
        return {"verdict": "no_collective", "suspects": [], "sites": {}}
    main = max(sites.values(), key=lambda ranks: (len(ranks), -ranks[0]))
    suspects = sorted(r for r in dumps if r not in main)
    verdict = "divergence" if len(sites) > 1 else "straggler" if idle else "straggler_or_network"
    return {"verdict": verdict, "suspects": suspects, "sites": sites}
    ### END SOLUTION
