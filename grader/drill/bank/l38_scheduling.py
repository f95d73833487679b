"""L38 · Scheduling: greedy vs gang binding, HAMi's memory accounting."""

from __future__ import annotations

import random

from grader.drill.bank._kit import MiB, Params, Step, T
from grader.i18n import N_, _

FN = ("l38_scheduling", "scheduling")
OUTCOMES = [N_("deadlock"), N_("no deadlock")]


def _pods(rng: random.Random) -> Params:
    size = rng.choice([4, 8])
    cap = rng.choice([size + 2, size + size // 2, 2 * size, 2 * size - 1])
    mode = rng.choice([N_("interleaved"), N_("in order")])
    arrivals = ["A", "B"] * size if mode == "interleaved" else ["A"] * size + ["B"] * size
    return {"size": size, "cap": cap, "mode": mode, "arrivals": arrivals, "gang": rng.choice([False, True])}


def _pods_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            N_("{cap} GPUs; each job needs {size}; pods arrive {mode}; {binding}"),
            p["cap"],
            args={
                "cap": p["cap"],
                "size": p["size"],
                "mode": p["mode"],
                "binding": N_("gang: a job binds whole or not at all")
                if p["gang"]
                else N_("greedy: each pod binds on arrival"),
            },
        )
    ]


def _hami(rng: random.Random) -> Params:
    sizes = [rng.choice([1, 3 * MiB, 5 * MiB + 1, 64 * MiB, 100 * MiB]) for _ in range(rng.choice([3, 5, 8]))]
    return {"sizes": sizes, "shown": ", ".join(f"{s:,} B" for s in sizes), "limit_gib": 1}


def _hami_steps(p: Params) -> list[Step]:
    charges = [-(-s // (2 * MiB)) * 2 * MiB for s in p["sizes"]]
    return [
        Step("=" if i == 0 else "+", N_("{s:,} B charged in 2 MiB units"), c, "B", args={"s": s})
        for i, (s, c) in enumerate(zip(p["sizes"], charges, strict=True))
    ]


TEMPLATES = [
    T(
        "l38.gang_deadlock",
        (*FN, "schedule_pods"),
        "platform",
        2,
        38,
        lambda p: _(
            "{cap} free GPUs; jobs A and B need {size} GPUs each (one per pod); their pods arrive "
            "{arrival}; "
            "{scheduler}. "
            "Nothing finishes meanwhile. Does it deadlock?"
        ).format(
            cap=p["cap"],
            size=p["size"],
            arrival=_("alternately A, B, A, B, …") if p["mode"] == "interleaved" else _("all of A, then all of B"),
            scheduler=_("a gang scheduler (all or nothing)")
            if p["gang"]
            else _("a plain scheduler binding each pod on arrival"),
        ),
        _pods,
        lambda p, fn: (
            OUTCOMES[0]
            if fn(p["cap"], {"A": p["size"], "B": p["size"]}, p["arrivals"], p["gang"])["deadlocked"]
            else OUTCOMES[1]
        ),
        _pods_steps,
        kind="choice",
        options=lambda p: list(OUTCOMES),
        source=N_("gang scheduling (Volcano, Kueue): all-or-nothing binding"),
    ),
    T(
        "l38.hami_used",
        (*FN, "hami_memory"),
        "platform",
        2,
        38,
        N_(
            "A container limited to 1 GiB by HAMi allocates {shown}. HAMi charges each allocation "
            "rounded up to 2 MiB. How many bytes are charged after these allocations?"
        ),
        _hami,
        lambda p, fn: fn(p["limit_gib"] * 2**30, [("alloc", s) for s in p["sizes"]])[-1][1],
        _hami_steps,
        "B",
        ("MiB", "MB", "B"),
        rtol=0.001,
        source=N_("HAMi-core's cuMemAlloc hook"),
    ),
]


def _bound_steps(p: Params) -> list[Step]:
    if p["gang"]:
        jobs = min(2, p["cap"] // p["size"])
        return [
            Step("=", N_("whole jobs that fit, one after the other: {jobs}"), jobs, args={"jobs": jobs}),
            Step("×", N_("GPUs per job"), p["size"]),
        ]
    return [
        Step(
            "=",
            N_("each pod binds while a GPU is free: min({cap}, {v2_size} pods)"),
            min(p["cap"], 2 * p["size"]),
            args={"cap": p["cap"], "v2_size": 2 * p["size"]},
        )
    ]


TEMPLATES += [
    T(
        "l38.gang_bound",
        (*FN, "schedule_pods"),
        "platform",
        2,
        38,
        lambda p: _(
            "{cap} free GPUs; jobs A and B need {size} GPUs each; pods arrive "
            "{arrival}; a "
            "{scheduler}. Nothing finishes. How many "
            "GPUs end up bound (A and B together)?"
        ).format(
            cap=p["cap"],
            size=p["size"],
            arrival=_("alternately A, B, A, B, …") if p["mode"] == "interleaved" else _("all of A, then all of B"),
            scheduler=_("gang scheduler") if p["gang"] else _("plain pod-by-pod scheduler"),
        ),
        _pods,
        lambda p, fn: sum(fn(p["cap"], {"A": p["size"], "B": p["size"]}, p["arrivals"], p["gang"])["bound"].values()),
        _bound_steps,
        "1",
        rtol=1e-9,
    ),
]

HAMI = [N_("ok"), N_("oom")]


def _hami_next(rng: random.Random) -> Params:
    p = _hami(rng)
    p["sizes"] = [rng.choice([100 * MiB, 200 * MiB, 300 * MiB - 1]) for _ in range(rng.choice([2, 3, 4]))]
    p["shown"] = ", ".join(f"{s:,} B" for s in p["sizes"])
    p["next"] = rng.choice([1, 64 * MiB + 1, 128 * MiB, 200 * MiB, 400 * MiB])
    return p


TEMPLATES += [
    T(
        "l38.hami_next_alloc",
        (*FN, "hami_memory"),
        "platform",
        2,
        38,
        N_(
            "HAMi limits a container to 1 GiB and charges each allocation rounded up to 2 MiB. "
            "After allocating {shown}, it asks for {next:,} B more. Does HAMi grant it?"
        ),
        _hami_next,
        lambda p, fn: fn(2**30, [("alloc", s) for s in [*p["sizes"], p["next"]]])[-1][0],
        lambda p: [
            *_hami_steps(p),
            Step(
                "+",
                N_("the new request, charged in 2 MiB units (limit {v2_30:,} B)"),
                -(-p["next"] // (2 * MiB)) * 2 * MiB,
                "B",
                args={"v2_30": 2**30},
            ),
        ],
        kind="choice",
        options=lambda p: list(HAMI),
    ),
]
