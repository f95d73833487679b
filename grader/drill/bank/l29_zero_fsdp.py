"""L29 · ZeRO and FSDP: memory per GPU by stage, traffic by stage, FSDP's unsharding peak."""

from __future__ import annotations

import random

from grader.drill.bank._kit import BILLIONS, Params, Step, T
from grader.i18n import N_, _

FN = ("l29_zero_fsdp", "zero")
SHARDED = {
    0: N_("nothing sharded"),
    1: N_("optimizer states sharded"),
    2: N_("optimizer states and gradients sharded"),
    3: N_("optimizer states, gradients and weights sharded"),
}


def _z(rng: random.Random) -> Params:
    billions = rng.choice(BILLIONS)
    return {
        "billions": billions,
        "n": billions * 10**9,
        "gpus": rng.choice([8, 16, 32, 64, 128, 256, 512]),
        "stage": rng.choice([0, 1, 2, 3]),
    }


def _mem_steps(p: Params) -> list[Step]:
    n, g, z = p["n"], p["gpus"], p["stage"]
    shard = -(-n // g)
    return [
        Step(
            "=",
            N_("bf16 weights: 2 B × {share3}"),
            2 * (shard if z >= 3 else n),
            "B",
            args={"share3": N_("Ψ/N") if z >= 3 else N_("Ψ")},
        ),
        Step(
            "+",
            N_("bf16 gradients: 2 B × {share2}"),
            2 * (shard if z >= 2 else n),
            "B",
            args={"share2": N_("Ψ/N") if z >= 2 else N_("Ψ")},
        ),
        Step(
            "+",
            N_("Adam states: 12 B × {share1}"),
            12 * (shard if z >= 1 else n),
            "B",
            args={"share1": N_("Ψ/N") if z >= 1 else N_("Ψ")},
        ),
    ]


def _comm_steps(p: Params) -> list[Step]:
    n, g, z = p["n"], p["gpus"], p["stage"]
    per_pass = (g - 1) * -(-n // g) * 2
    passes = 3 if z == 3 else 2
    what = (
        N_("reduce-scatter the gradients + all-gather the weights twice (forward and backward)")
        if z == 3
        else N_("reduce-scatter + all-gather (an all-reduce's two passes)")
    )
    return [Step("=", N_("one ring pass: (N−1) chunks of Ψ/N bf16 values"), per_pass, "B"), Step("×", what, passes)]


def _fsdp(rng: random.Random) -> Params:
    m = {
        "LLaMA-3-8B": (32, 218_112_000, 1_050_677_248),
        "LLaMA-3-70B": (80, 855_654_400, 2_101_354_496),
        "LLaMA-2-7B": (32, 202_383_360, 262_148_096),
    }
    name = rng.choice(sorted(m))
    layers, per_layer, rest = m[name]
    return {
        "model": name,
        "layers": layers,
        "per_layer": per_layer,
        "rest": rest,
        "gpus": rng.choice([8, 16, 64]),
        "prefetch": rng.choice([0, 1, 2]),
    }


def _units(p: Params) -> list[int]:
    return [p["rest"]] + [p["per_layer"]] * p["layers"]


def _fsdp_steps(p: Params) -> list[Step]:
    units, g, k = _units(p), p["gpus"], p["prefetch"]
    shards = sum(-(-u // g) for u in units) * 2
    window = max(sum(units[i : i + 1 + k]) for i in range(len(units))) * 2
    return [
        Step("=", N_("every unit's bf16 shard, always resident"), shards, "B"),
        Step(
            "+",
            N_("the largest window of {v1_k} unsharded unit(s): running + prefetched"),
            window,
            "B",
            args={"v1_k": 1 + k},
        ),
    ]


TEMPLATES = [
    T(
        "l29.zero_memory",
        (*FN, "zero_memory_per_gpu"),
        "memory",
        2,
        29,
        lambda p: _(
            "A {billions}B model, mixed-precision Adam (16 B/param), data parallel over {gpus} "
            "GPUs with ZeRO-{stage} ({SHARDED_stage}): static memory per GPU?"
        ).format(billions=p["billions"], gpus=p["gpus"], stage=p["stage"], SHARDED_stage=_(SHARDED[p["stage"]])),
        _z,
        lambda p, fn: fn(p["n"], p["gpus"], p["stage"]),
        _mem_steps,
        "B",
        ("GB", "GiB", "TB", "B"),
        source=N_("ZeRO (Rajbhandari et al. 2020), fig. 1"),
    ),
    T(
        "l29.zero_comm",
        (*FN, "zero_comm_bytes_per_gpu"),
        "communication",
        3,
        29,
        N_(
            "A {billions}B model in bf16, data parallel over {gpus} GPUs with ZeRO-{stage}, ring "
            "collectives: how many bytes does each GPU send per training step?"
        ),
        _z,
        lambda p, fn: fn(p["n"], p["gpus"], p["stage"]),
        _comm_steps,
        "B",
        ("GB", "TB", "GiB", "B"),
        source=N_("ZeRO paper §7: stages 0–2 move 2Ψ, stage 3 moves 3Ψ (the N → ∞ limits)"),
    ),
    T(
        "l29.fsdp_peak",
        (*FN, "fsdp_peak_param_bytes"),
        "memory",
        3,
        29,
        N_(
            "{model} under FSDP FULL_SHARD on {gpus} GPUs, wrapped per decoder layer ({layers} "
            "units of {per_layer} parameters, plus one root unit of {rest} for the embeddings, "
            "final norm and head), bf16, prefetching {prefetch} unit(s) ahead. Peak parameter "
            "bytes on one GPU?"
        ),
        _fsdp,
        lambda p, fn: fn(_units(p), p["gpus"], p["prefetch"]),
        _fsdp_steps,
        "B",
        ("GB", "GiB", "B"),
        source=N_("PyTorch FSDP (Zhao et al. 2023): one unit unsharded at a time, plus prefetch"),
    ),
]

STAGE_CHOICES = [
    N_("ZeRO-0 (plain DDP)"),
    N_("ZeRO-1"),
    N_("ZeRO-2"),
    N_("ZeRO-3"),
    N_("none: it does not fit even with ZeRO-3"),
]


def _fit(rng: random.Random) -> Params:
    return {**_z(rng), "mem_gib": rng.choice([40, 80, 141])}


def _lowest(p: Params, fn) -> str:
    for stage in range(4):
        if fn(p["n"], p["gpus"], stage) <= p["mem_gib"] * 2**30:
            return STAGE_CHOICES[stage]
    return STAGE_CHOICES[4]


TEMPLATES += [
    T(
        "l29.lowest_stage_that_fits",
        (*FN, "zero_memory_per_gpu"),
        "memory",
        2,
        29,
        N_(
            "A {billions}B model, mixed-precision Adam (16 B/param), data parallel over {gpus} "
            "GPUs of {mem_gib} GiB. Counting static memory only, which is the lowest ZeRO stage "
            "that fits?"
        ),
        _fit,
        _lowest,
        lambda p: [
            Step(
                "=",
                N_("ZeRO-{z}: {total_gib:.1f} GiB"),
                sum(s.value for s in _mem_steps({**p, "stage": z})),
                "B",
                args={
                    "z": z,
                    "total_gib": sum(s.value for s in _mem_steps({**p, "stage": z})) / 2**30,
                },
            )
            for z in range(4)
        ],
        kind="choice",
        options=lambda p: list(STAGE_CHOICES),
        source=N_("ZeRO: each stage trades memory for traffic"),
    ),
]
