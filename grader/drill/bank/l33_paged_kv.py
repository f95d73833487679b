"""L33 · PagedAttention: blocks per sequence, paged vs static utilization, continuous batching steps."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l33_paged_kv", "paged")


def _blocks(rng: random.Random) -> Params:
    return {"n": rng.randrange(1, 9000), "bs": rng.choice([8, 16, 32])}


def _util(rng: random.Random) -> Params:
    smax = rng.choice([512, 2048, 4096])
    lengths = [rng.randrange(1, smax + 1) for _ in range(rng.choice([4, 6, 8]))]
    return {"lengths": lengths, "shown": ", ".join(map(str, lengths)), "bs": rng.choice([16, 32]), "smax": smax}


def _paged_steps(p: Params) -> list[Step]:
    slots = sum(math.ceil(n / p["bs"]) for n in p["lengths"]) * p["bs"]
    return [Step("=", N_("tokens"), sum(p["lengths"])), Step("÷", N_("slots: Σ ceil(len/B) × B, per sequence"), slots)]


def _static_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("tokens"), sum(p["lengths"])),
        Step("÷", N_("slots: every sequence pre-allocated at the maximum"), len(p["lengths"]) * p["smax"]),
    ]


def _cb(rng: random.Random) -> Params:
    lengths = [rng.randrange(2, 40) for _ in range(rng.choice([6, 8, 12]))]
    return {"lengths": lengths, "shown": ", ".join(map(str, lengths)), "batch": rng.choice([2, 3, 4])}


def _static_cb_steps(p: Params) -> list[Step]:
    b, ls = p["batch"], p["lengths"]
    groups = [ls[i : i + b] for i in range(0, len(ls), b)]
    return [
        Step(
            "=" if i == 0 else "+",
            N_("group {i_1}: runs until its longest, {max_g}"),
            max(g),
            args={"i_1": i + 1, "max_g": max(g)},
        )
        for i, g in enumerate(groups)
    ]


TEMPLATES = [
    T(
        "l33.blocks_needed",
        (*FN, "blocks_needed"),
        "serving",
        1,
        33,
        N_("A sequence of {n} tokens, KV blocks of {bs} tokens: how many blocks does it hold?"),
        _blocks,
        lambda p, fn: fn(p["n"], p["bs"]),
        lambda p: [
            Step("=", N_("n / B"), p["n"] / p["bs"]),
            Step("+", N_("round up to whole blocks"), math.ceil(p["n"] / p["bs"]) - p["n"] / p["bs"]),
        ],
        "1",
        rtol=1e-9,
        source=N_("vLLM PagedAttention (Kwon et al. 2023)"),
    ),
    T(
        "l33.paged_utilization",
        (*FN, "paged_utilization"),
        "serving",
        2,
        33,
        N_(
            "Sequences of {shown} tokens in a paged KV cache with blocks of {bs} tokens (each "
            "sequence its own blocks): what fraction of the allocated slots hold tokens?"
        ),
        _util,
        lambda p, fn: fn(p["lengths"], p["bs"], p["smax"])["paged_utilization"],
        _paged_steps,
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_("internal fragmentation only in each sequence's last block"),
    ),
    T(
        "l33.static_utilization",
        (*FN, "paged_utilization"),
        "serving",
        1,
        33,
        N_(
            "Sequences of {shown} tokens, each pre-allocated a contiguous KV region for {smax} "
            "tokens: what fraction of the reserved slots hold tokens?"
        ),
        _util,
        lambda p, fn: fn(p["lengths"], p["bs"], p["smax"])["static_utilization"],
        _static_steps,
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_("pre-allocation at max length wastes the reservation (PagedAttention §3)"),
    ),
    T(
        "l33.static_batching_steps",
        (*FN, "static_vs_continuous_steps"),
        "serving",
        2,
        33,
        N_(
            "{batch} decode slots; requests in order generate {shown} tokens (one per slot per "
            "step). Static batching runs consecutive groups of {batch} until each group's longest "
            "finishes: how many steps in all?"
        ),
        _cb,
        lambda p, fn: fn(p["lengths"], p["batch"])["static_steps"],
        _static_cb_steps,
        "1",
        rtol=1e-9,
        source=N_("Orca (Yu et al. 2022): iteration-level scheduling removes this waste"),
    ),
]

TEMPLATES += [
    T(
        "l33.internal_waste",
        (*FN, "paged_utilization"),
        "serving",
        2,
        33,
        N_(
            "Sequences of {shown} tokens in a paged KV cache with blocks of {bs} tokens: how many "
            "token slots sit empty in the sequences' last blocks?"
        ),
        _util,
        lambda p, fn: fn(p["lengths"], p["bs"], p["smax"])["internal_waste_slots"],
        lambda p: [
            Step(
                "=" if i == 0 else "+",
                N_("{n} tokens: ceil({n}/{bs})·{bs} − {n}"),
                math.ceil(n / p["bs"]) * p["bs"] - n,
                args={"n": n, "bs": p["bs"]},
            )
            for i, n in enumerate(p["lengths"])
        ],
        "1",
        rtol=1e-9,
    ),
]

TEMPLATES += [
    T(
        "l33.batch_blocks",
        (*FN, "paged_utilization"),
        "serving",
        1,
        33,
        N_(
            "Sequences of {shown} tokens, KV blocks of {bs} tokens, each sequence its own blocks: "
            "how many blocks in all?"
        ),
        _util,
        lambda p, fn: fn(p["lengths"], p["bs"], p["smax"])["blocks"],
        lambda p: [
            Step("=" if i == 0 else "+", N_("ceil({n}/{bs})"), math.ceil(n / p["bs"]), args={"n": n, "bs": p["bs"]})
            for i, n in enumerate(p["lengths"])
        ],
        "1",
        rtol=1e-9,
        source=N_("blocks are per sequence: never ceil(total / B)"),
    ),
]
