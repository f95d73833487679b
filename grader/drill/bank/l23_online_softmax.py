"""L23 · Softmax's bytes: three passes, online, fused."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_, _

FN = ("l23_online_softmax", "softmax", "softmax_hbm_bytes")
READS = {"three_pass": 3, "online": 2, "fused": 1}


def _sm(rng: random.Random) -> Params:
    return {
        "rows": rng.choice([1024, 4096, 32768]),
        "cols": rng.choice([1000, 4096, 32000, 128256]),
        "e": rng.choice([2, 4]),
        "alg": rng.choice(sorted(READS)),
    }


def _steps(p: Params) -> list[Step]:
    x = p["rows"] * p["cols"] * p["e"]
    return [
        Step(
            "=",
            N_("{alg}: x read {READS_alg} time(s)"),
            READS[p["alg"]] * x,
            "B",
            args={"alg": p["alg"], "READS_alg": READS[p["alg"]]},
        ),
        Step("+", N_("y written once"), x, "B"),
    ]


NAMES = {
    "three_pass": N_("three-pass (max, sum, normalize)"),
    "online": N_("online (stats pass, then normalize)"),
    "fused": N_("fused (the row stays on chip)"),
}

TEMPLATES = [
    T(
        "l23.softmax_bytes",
        FN,
        "kernels",
        1,
        23,
        lambda p: _(
            "Row-wise softmax of a {rows} × {cols} tensor of {e}-byte elements, {NAMES_alg}: how "
            "many bytes move to and from HBM?"
        ).format(rows=p["rows"], cols=p["cols"], e=p["e"], NAMES_alg=_(NAMES[p["alg"]])),
        _sm,
        lambda p, fn: fn(p["rows"], p["cols"], p["e"], p["alg"]),
        _steps,
        "B",
        ("MB", "GB", "MiB", "B"),
        source=N_("Milakov & Gimelshein 2018 (online normalizer calculation for softmax)"),
    ),
    T(
        "l23.softmax_order",
        FN,
        "kernels",
        1,
        23,
        N_("Order these softmax implementations by HBM traffic for the same {rows} × {cols} tensor, least first."),
        _sm,
        lambda p, fn: sorted(
            NAMES.values(), key=lambda v: fn(p["rows"], p["cols"], p["e"], next(k for k, n in NAMES.items() if n == v))
        ),
        lambda p: [
            Step(
                "=",
                N_("{NAMES_k}: {READS_k} read(s) + 1 write of the tensor"),
                READS[k] + 1,
                args={"NAMES_k": NAMES[k], "READS_k": READS[k]},
            )
            for k in NAMES
        ],
        kind="order",
        options=lambda p: [NAMES[k] for k in ("three_pass", "fused", "online")],
    ),
]


def _stream(rng: random.Random) -> Params:
    xs = [rng.choice([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0]) for _ in range(rng.choice([3, 4, 5]))]
    return {"xs": xs, "shown": ", ".join(f"{x:g}" for x in xs)}


def _stream_steps(p: Params) -> list[Step]:
    m = max(p["xs"])
    return [
        Step("=" if i == 0 else "+", N_("e^({x:g} − {m:g})"), math.exp(x - m), args={"x": x, "m": m})
        for i, x in enumerate(p["xs"])
    ]


TEMPLATES += [
    T(
        "l23.online_denominator",
        ("l23_online_softmax", "softmax", "online_softmax_state"),
        "kernels",
        2,
        23,
        N_(
            "The online softmax streams x = [{shown}], keeping a running max m and denominator d "
            "= Σ e^(x − m). What is d at the end?"
        ),
        _stream,
        lambda p, fn: fn(p["xs"])[1],
        _stream_steps,
        "1",
        rtol=1e-4,
        source=N_("Milakov & Gimelshein 2018: rescale d by e^(m_old − m_new) when the max grows"),
    ),
]
