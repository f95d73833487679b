"""L39 · SLOs and queueing: Erlang C, M/M/c waits, burn rates, error budget consumed."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T

FN = ("l39_slo_queueing", "slo")


def _q(rng: random.Random) -> Params:
    c = rng.choice([2, 4, 8, 16, 24, 32])
    mu = rng.choice([0.5, 1.0, 2.0])
    lam = round(mu * c * rng.choice([0.5, 0.7, 0.8, 0.9]), 3)
    return {"c": c, "mu": mu, "lam": lam, "a": lam / mu, "service_s": 1 / mu}


def _erlang(p: Params) -> float:
    b, a = 1.0, p["a"]
    for k in range(1, p["c"] + 1):
        b = a * b / (k + a * b)
    return b / (1 - a / p["c"] * (1 - b))


def _burn(rng: random.Random) -> Params:
    total = rng.choice([10_000, 50_000, 200_000])
    return {"total": total, "bad": rng.randrange(1, total // 50), "slo": rng.choice([0.99, 0.995, 0.999, 0.9999])}


def _budget(rng: random.Random) -> Params:
    return {"burn": rng.choice([1, 2, 6, 14.4, 36]), "hours": rng.choice([1, 6, 24, 72])}


TEMPLATES = [
    T(
        "l39.erlang_c",
        (*FN, "erlang_c"),
        "serving",
        3,
        39,
        "An M/M/c queue: {c} slots, arrivals {lam:g}/s, each slot serves {mu:g}/s. What is the probability that an "
        "arriving request has to wait?",
        _q,
        lambda p, fn: fn(p["c"], p["a"]),
        lambda p: [
            Step("=", f"Erlang C with A = λ/μ = {p['a']:g} Erlangs on c = {p['c']} (Erlang-B recursion)", _erlang(p))
        ],
        "ratio",
        ("%",),
        rtol=0.005,
        source="Erlang C via the Erlang-B recursion (no factorials)",
    ),
    T(
        "l39.mmc_mean_wait",
        (*FN, "mmc_wait"),
        "serving",
        3,
        39,
        "An M/M/c queue: {c} slots, arrivals {lam:g}/s, service {service_s:g} s per request. What is the mean wait "
        "in the queue?",
        _q,
        lambda p, fn: fn(p["lam"], p["mu"], p["c"])["mean_wait_s"],
        lambda p: [
            Step("=", "P(wait): Erlang C", _erlang(p)),
            Step("÷", "c·μ − λ: the rate the queue drains", p["c"] * p["mu"] - p["lam"], "1/s"),
        ],
        "s",
        ("ms", "s"),
        rtol=0.005,
        source="M/M/c: W_q = C(c, A) / (cμ − λ)",
    ),
    T(
        "l39.mmc_utilization",
        (*FN, "mmc_wait"),
        "serving",
        1,
        39,
        "{c} serving slots, arrivals {lam:g}/s, each request takes {service_s:g} s. What is the utilization?",
        _q,
        lambda p, fn: fn(p["lam"], p["mu"], p["c"])["utilization"],
        lambda p: [Step("=", "λ", p["lam"], "1/s"), Step("÷", "c·μ", p["c"] * p["mu"], "1/s")],
        "ratio",
        ("%",),
        rtol=0.002,
    ),
    T(
        "l39.burn_rate",
        (*FN, "burn_rate"),
        "operations",
        2,
        39,
        "In the last hour {bad} of {total} requests failed; the availability SLO is {slo:.2%}. What is the burn rate?",
        _burn,
        lambda p, fn: fn(p["bad"], p["total"], p["slo"]),
        lambda p: [
            Step("=", "error ratio bad/total", p["bad"] / p["total"]),
            Step("÷", "error budget 1 − SLO", 1 - p["slo"]),
        ],
        "1",
        rtol=0.002,
        source="Google SRE Workbook, ch. 5 (alerting on SLOs)",
    ),
    T(
        "l39.budget_consumed",
        (*FN, "budget_consumed"),
        "operations",
        1,
        39,
        "Burning the error budget at rate {burn:g} for {hours} h: what share of a 30-day budget is spent?",
        _budget,
        lambda p, fn: fn(p["burn"], p["hours"] * 3600),
        lambda p: [
            Step("=", "burn rate", p["burn"]),
            Step("×", "window", p["hours"] * 3600, "s"),
            Step("÷", "30 days", 30 * 86400, "s"),
        ],
        "ratio",
        ("%",),
        rtol=0.002,
        source="SRE Workbook: 14.4 for 1 h = 2 % of a 30-day budget",
    ),
]
_ = math
