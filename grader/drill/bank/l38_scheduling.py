"""L38 · Scheduling: greedy vs gang binding, HAMi's memory accounting."""

from __future__ import annotations

import random

from grader.drill.bank._kit import MiB, Params, Step, T

FN = ("l38_scheduling", "scheduling")
OUTCOMES = ["deadlock", "no deadlock"]


def _pods(rng: random.Random) -> Params:
    size = rng.choice([4, 8])
    cap = rng.choice([size + 2, size + size // 2, 2 * size, 2 * size - 1])
    mode = rng.choice(["interleaved", "in order"])
    arrivals = ["A", "B"] * size if mode == "interleaved" else ["A"] * size + ["B"] * size
    return {"size": size, "cap": cap, "mode": mode, "arrivals": arrivals, "gang": rng.choice([False, True])}


def _pods_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=",
            f"{p['cap']} GPUs; each job needs {p['size']}; pods arrive {p['mode']}; "
            f"{'gang: a job binds whole or not at all' if p['gang'] else 'greedy: each pod binds on arrival'}",
            p["cap"],
        )
    ]


def _hami(rng: random.Random) -> Params:
    sizes = [rng.choice([1, 3 * MiB, 5 * MiB + 1, 64 * MiB, 100 * MiB]) for _ in range(rng.choice([3, 5, 8]))]
    return {"sizes": sizes, "shown": ", ".join(f"{s:,} B" for s in sizes), "limit_gib": 1}


def _hami_steps(p: Params) -> list[Step]:
    charges = [-(-s // (2 * MiB)) * 2 * MiB for s in p["sizes"]]
    return [
        Step("=" if i == 0 else "+", f"{s:,} B charged in 2 MiB units", c, "B")
        for i, (s, c) in enumerate(zip(p["sizes"], charges, strict=True))
    ]


TEMPLATES = [
    T(
        "l38.gang_deadlock",
        (*FN, "schedule_pods"),
        "platform",
        2,
        38,
        lambda p: (
            f"{p['cap']} free GPUs; jobs A and B need {p['size']} GPUs each (one per pod); their pods arrive "
            f"{'alternately A, B, A, B, …' if p['mode'] == 'interleaved' else 'all of A, then all of B'}; "
            f"{'a gang scheduler (all or nothing)' if p['gang'] else 'a plain scheduler binding each pod on arrival'}"
            ". Nothing finishes meanwhile. Does it deadlock?"
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
        source="gang scheduling (Volcano, Kueue): all-or-nothing binding",
    ),
    T(
        "l38.hami_used",
        (*FN, "hami_memory"),
        "platform",
        2,
        38,
        "A container limited to 1 GiB by HAMi allocates {shown}. HAMi charges each allocation rounded up to 2 MiB. "
        "How many bytes are charged after these allocations?",
        _hami,
        lambda p, fn: fn(p["limit_gib"] * 2**30, [("alloc", s) for s in p["sizes"]])[-1][1],
        _hami_steps,
        "B",
        ("MiB", "MB", "B"),
        rtol=0.001,
        source="HAMi-core's cuMemAlloc hook",
    ),
]


def _bound_steps(p: Params) -> list[Step]:
    if p["gang"]:
        jobs = min(2, p["cap"] // p["size"])
        return [
            Step("=", f"whole jobs that fit, one after the other: {jobs}", jobs),
            Step("×", "GPUs per job", p["size"]),
        ]
    return [
        Step(
            "=",
            f"each pod binds while a GPU is free: min({p['cap']}, {2 * p['size']} pods)",
            min(p["cap"], 2 * p["size"]),
        )
    ]


TEMPLATES += [
    T(
        "l38.gang_bound",
        (*FN, "schedule_pods"),
        "platform",
        2,
        38,
        lambda p: (
            f"{p['cap']} free GPUs; jobs A and B need {p['size']} GPUs each; pods arrive "
            f"{'alternately A, B, A, B, …' if p['mode'] == 'interleaved' else 'all of A, then all of B'}; a "
            f"{'gang scheduler' if p['gang'] else 'plain pod-by-pod scheduler'}. Nothing finishes. How many GPUs "
            "end up bound (A and B together)?"
        ),
        _pods,
        lambda p, fn: sum(fn(p["cap"], {"A": p["size"], "B": p["size"]}, p["arrivals"], p["gang"])["bound"].values()),
        _bound_steps,
        "1",
        rtol=1e-9,
    ),
]

HAMI = ["ok", "oom"]


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
        "HAMi limits a container to 1 GiB and charges each allocation rounded up to 2 MiB. After allocating {shown}, "
        "it asks for {next:,} B more. Does HAMi grant it?",
        _hami_next,
        lambda p, fn: fn(2**30, [("alloc", s) for s in [*p["sizes"], p["next"]]])[-1][0],
        lambda p: [
            *_hami_steps(p),
            Step(
                "+",
                f"the new request, charged in 2 MiB units (limit {2**30:,} B)",
                -(-p["next"] // (2 * MiB)) * 2 * MiB,
                "B",
            ),
        ],
        kind="choice",
        options=lambda p: list(HAMI),
    ),
]
