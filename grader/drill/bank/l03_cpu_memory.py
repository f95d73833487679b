"""L03 · CPU caches: the fields of an address (offset, set, tag)."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T

FN = ("l03_cpu_memory", "cpu_memory", "cache_decompose")


def _addr(rng: random.Random) -> Params:
    addr = rng.randrange(2**12, 2**24)
    return {"addr": addr, "hex": f"{addr:#x}", "line": rng.choice([32, 64, 128]), "sets": rng.choice([64, 256, 1024])}


def _set_steps(p: Params) -> list[Step]:
    lines = p["addr"] // p["line"]
    return [
        Step("=", f"line number: address // {p['line']} B per line", lines),
        Step(
            "-",
            f"whole rounds of {p['sets']} sets: ({lines} // {p['sets']}) × {p['sets']}",
            lines // p["sets"] * p["sets"],
        ),
    ]


def _tag_steps(p: Params) -> list[Step]:
    span = p["line"] * p["sets"]
    return [
        Step("=", "address", p["addr"]),
        Step("÷", f"bytes per line × sets = {span}", span),
        Step("-", "drop the fraction (the set and offset bits)", p["addr"] / span - p["addr"] // span),
    ]


TEMPLATES = [
    T(
        "l03.cache_set_index",
        FN,
        "kernels",
        2,
        3,
        "A cache with {line}-byte lines and {sets} sets: which set does byte address {hex} map to?",
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[1],
        _set_steps,
        "1",
        rtol=1e-9,
        source="set = (address // line) mod sets",
    ),
    T(
        "l03.cache_tag",
        FN,
        "kernels",
        2,
        3,
        "A cache with {line}-byte lines and {sets} sets: what is the tag of byte address {hex} (in decimal)?",
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[0],
        _tag_steps,
        "1",
        rtol=1e-9,
        source="tag = address // (line · sets)",
    ),
    T(
        "l03.cache_offset",
        FN,
        "kernels",
        1,
        3,
        "A cache with {line}-byte lines: at which byte offset inside its line is address {hex}?",
        _addr,
        lambda p, fn: fn(p["addr"], p["line"], p["sets"])[2],
        lambda p: [
            Step("=", "address", p["addr"]),
            Step("-", f"whole lines × {p['line']} B", p["addr"] // p["line"] * p["line"], "B"),
        ],
        "1",
        rtol=1e-9,
        source="offset = address mod line",
    ),
]
