"""L04 · Linux baselines: the load average is an exponential moving average, not a count."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l04_linux_tools", "linux_tools", "loadavg_ema")


def _load(rng: random.Random) -> Params:
    window = rng.choice([60, 300, 900])
    return {
        "n": rng.choice([8, 32, 64, 96, 128, 256]),
        "ticks": rng.choice([6, 12, 24, 36, 60, 120]),
        "window": window,
        "minutes": window // 60,
    }


def _steps(p: Params) -> list[Step]:
    k, w = p["ticks"], p["window"]
    return [
        Step("=", N_("runnable + uninterruptible tasks at every 5 s tick"), p["n"]),
        Step(
            "×",
            N_("1 − e^(−5·{k}/{w}): what the EMA has absorbed after {k} ticks from 0"),
            1 - math.exp(-5 * k / w),
            args={"k": k, "w": w},
        ),
    ]


TEMPLATES = [
    T(
        "l04.loadavg_ramp",
        FN,
        "operations",
        2,
        4,
        N_(
            "An idle 128-core box suddenly has {n} tasks runnable or in D state, steadily, for "
            "{ticks} ticks of 5 s. What does the {minutes}-minute load average read?"
        ),
        _load,
        lambda p, fn: fn([p["n"]] * p["ticks"], p["window"]),
        _steps,
        "1",
        rtol=0.01,
        source=N_("the kernel's loadavg: L ← L·e^(−5/W) + n·(1 − e^(−5/W)) every 5 s"),
    ),
]


def _decay(rng: random.Random) -> Params:
    return {**_load(rng), "idle": rng.choice([6, 12, 24])}


def _decay_steps(p: Params) -> list[Step]:
    k, j, w = p["ticks"], p["idle"], p["window"]
    return [
        Step(
            "=",
            N_("after {k} busy ticks: n·(1 − e^(−5·{k}/{w}))"),
            p["n"] * (1 - math.exp(-5 * k / w)),
            args={"k": k, "w": w},
        ),
        Step("×", N_("then {j} idle ticks decay it by e^(−5·{j}/{w})"), math.exp(-5 * j / w), args={"j": j, "w": w}),
    ]


TEMPLATES += [
    T(
        "l04.loadavg_decay",
        FN,
        "operations",
        3,
        4,
        N_(
            "An idle box runs {n} busy tasks for {ticks} ticks of 5 s, then goes idle for {idle} "
            "ticks. What does the {minutes}-minute load average read now?"
        ),
        _decay,
        lambda p, fn: fn([p["n"]] * p["ticks"] + [0] * p["idle"], p["window"]),
        _decay_steps,
        "1",
        rtol=0.01,
        source=N_("the load average decays exponentially: it lags both the rise and the fall"),
    ),
]
