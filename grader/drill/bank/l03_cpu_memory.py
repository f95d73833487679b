"""L03 · CPU caches: the fields of an address (offset, set, tag)."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l03_cpu_memory", "cpu_memory", "cache_decompose")


def _addr(rng: random.Random) -> Params:
    addr = rng.randrange(2**12, 2**24)
    return {"addr": addr, "hex": f"{addr:#x}", "line": rng.choice([32, 64, 128]), "sets": rng.choice([64, 256, 1024])}


def _set_steps(p: Params) -> list[Step]:
    lines = p["addr"] // p["line"]
    return [
        Step("=", N_("line number: address // {line} B per line"), lines, args={"line": p["line"]}),
        Step(
            "-",
            N_("whole rounds of {sets} sets: ({lines} // {sets}) × {sets}"),
            lines // p["sets"] * p["sets"],
            args={"sets": p["sets"], "lines": lines},
        ),
    ]


def _tag_steps(p: Params) -> list[Step]:
    span = p["line"] * p["sets"]
    return [
        Step("=", N_("address"), p["addr"]),
        Step("÷", N_("bytes per line × sets = {span}"), span, args={"span": span}),
        Step("-", N_("drop the fraction (the set and offset bits)"), p["addr"] / span - p["addr"] // span),
    ]


TEMPLATES = [
    T(
        "l03.cache_set_index",
        FN,
        "kernels",
        2,
        3,
        N_("A cache with {line}-byte lines and {sets} sets: which set does byte address {hex} map to?"),
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[1],
        _set_steps,
        "1",
        rtol=1e-9,
        source=N_("set = (address // line) mod sets"),
    ),
    T(
        "l03.cache_tag",
        FN,
        "kernels",
        2,
        3,
        N_("A cache with {line}-byte lines and {sets} sets: what is the tag of byte address {hex} (in decimal)?"),
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[0],
        _tag_steps,
        "1",
        rtol=1e-9,
        source=N_("tag = address // (line · sets)"),
    ),
    T(
        "l03.cache_offset",
        FN,
        "kernels",
        1,
        3,
        N_("A cache with {line}-byte lines: at which byte offset inside its line is address {hex}?"),
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[2],
        lambda p: [
            Step("=", N_("address"), p["addr"]),
            Step("-", N_("whole lines × {line} B"), p["addr"] // p["line"] * p["line"], "B", args={"line": p["line"]}),
        ],
        "1",
        rtol=1e-9,
        source=N_("offset = address mod line"),
    ),
]

SIZES = {"char": 1, "short": 2, "int": 4, "float": 4, "double": 8, "pointer": 8, "half": 2, "long": 8}


def _struct(rng: random.Random) -> Params:
    fields = [(f"f{i}", rng.choice(sorted(SIZES))) for i in range(rng.choice([3, 4, 5]))]
    return {"fields": fields, "decl": "; ".join(f"{t} {n}" for n, t in fields)}


def _struct_steps(p: Params) -> list[Step]:
    offset, align, steps = 0, 1, []
    for name, t in p["fields"]:
        size = SIZES[t]
        start = -(-offset // size) * size
        steps.append(
            Step(
                "=" if not steps else "+",
                N_("{t} {name}: {start_offset} B of padding, then {size} B"),
                start - offset + size,
                "B",
                args={"t": t, "name": name, "start_offset": start - offset, "size": size},
            )
        )
        offset, align = start + size, max(align, size)
    steps.append(
        Step(
            "+",
            N_("tail padding to a multiple of the struct's alignment {align}"),
            -(-offset // align) * align - offset,
            "B",
            args={"align": align},
        )
    )
    return steps


TEMPLATES += [
    T(
        "l03.struct_size",
        ("l03_cpu_memory", "cpu_memory", "struct_layout"),
        "memory",
        2,
        3,
        N_("On x86-64, a C struct declares the fields {decl}, in this order. What is its sizeof?"),
        _struct,
        lambda p, fn: fn([tuple(f) for f in p["fields"]])["size"],
        _struct_steps,
        "B",
        ("B",),
        rtol=1e-9,
        source=N_("System V x86-64 ABI: each field at a multiple of its alignment, the size a multiple of the largest"),
    ),
]
