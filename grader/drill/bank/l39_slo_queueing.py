"""L39 · SLOs and queueing: Erlang C, M/M/c waits, burn rates, error budget consumed."""

from __future__ import annotations

import math
import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

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
        N_(
            "An M/M/c queue: {c} slots, arrivals {lam:g}/s, each slot serves {mu:g}/s. What is "
            "the probability that an arriving request has to wait?"
        ),
        _q,
        lambda p, fn: fn(p["c"], p["a"]),
        lambda p: [
            Step(
                "=",
                N_("Erlang C with A = λ/μ = {a:g} Erlangs on c = {c} (Erlang-B recursion)"),
                _erlang(p),
                args={"a": p["a"], "c": p["c"]},
            )
        ],
        "ratio",
        ("%",),
        rtol=0.005,
        source=N_("Erlang C via the Erlang-B recursion (no factorials)"),
    ),
    T(
        "l39.mmc_mean_wait",
        (*FN, "mmc_wait"),
        "serving",
        3,
        39,
        N_(
            "An M/M/c queue: {c} slots, arrivals {lam:g}/s, service {service_s:g} s per request. "
            "What is the mean wait in the queue?"
        ),
        _q,
        lambda p, fn: fn(p["lam"], p["mu"], p["c"])["mean_wait_s"],
        lambda p: [
            Step("=", N_("P(wait): Erlang C"), _erlang(p)),
            Step("÷", N_("c·μ − λ: the rate the queue drains"), p["c"] * p["mu"] - p["lam"], "1/s"),
        ],
        "s",
        ("ms", "s"),
        rtol=0.005,
        source=N_("M/M/c: W_q = C(c, A) / (cμ − λ)"),
    ),
    T(
        "l39.mmc_utilization",
        (*FN, "mmc_wait"),
        "serving",
        1,
        39,
        N_("{c} serving slots, arrivals {lam:g}/s, each request takes {service_s:g} s. What is the utilization?"),
        _q,
        lambda p, fn: fn(p["lam"], p["mu"], p["c"])["utilization"],
        lambda p: [Step("=", N_("λ"), p["lam"], "1/s"), Step("÷", N_("c·μ"), p["c"] * p["mu"], "1/s")],
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
        N_(
            "In the last hour {bad} of {total} requests failed; the availability SLO is "
            "{slo:.2%}. What is the burn rate?"
        ),
        _burn,
        lambda p, fn: fn(p["bad"], p["total"], p["slo"]),
        lambda p: [
            Step("=", N_("error ratio bad/total"), p["bad"] / p["total"]),
            Step("÷", N_("error budget 1 − SLO"), 1 - p["slo"]),
        ],
        "1",
        rtol=0.002,
        source=N_("Google SRE Workbook, ch. 5 (alerting on SLOs)"),
    ),
    T(
        "l39.budget_consumed",
        (*FN, "budget_consumed"),
        "operations",
        1,
        39,
        N_("Burning the error budget at rate {burn:g} for {hours} h: what share of a 30-day budget is spent?"),
        _budget,
        lambda p, fn: fn(p["burn"], p["hours"] * 3600),
        lambda p: [
            Step("=", N_("burn rate"), p["burn"]),
            Step("×", N_("window"), p["hours"] * 3600, "s"),
            Step("÷", N_("30 days"), 30 * 86400, "s"),
        ],
        "ratio",
        ("%",),
        rtol=0.002,
        source=N_("SRE Workbook: 14.4 for 1 h = 2 % of a 30-day budget"),
    ),
]
_ = math


def _tail(rng: random.Random) -> Params:
    return {**_q(rng), "t": rng.choice([0.1, 0.25, 0.5, 1.0])}


def _slo(rng: random.Random) -> Params:
    mu = rng.choice([0.5, 1.0, 2.0])
    return {
        "lam": rng.choice([5, 10, 20, 40]) * 1.0,
        "mu": mu,
        "service_s": 1 / mu,
        "t": rng.choice([0.25, 0.5, 1.0]),
        "eps": rng.choice([0.01, 0.05, 0.1]),
    }


def _slots(p: Params) -> tuple[int, float]:
    a = p["lam"] / p["mu"]
    c = math.floor(a) + 1
    while True:
        tail = _erlang({"a": a, "c": c}) * math.exp(-(c * p["mu"] - p["lam"]) * p["t"])
        if tail <= p["eps"]:
            return c, tail
        c += 1


TEMPLATES += [
    T(
        "l39.wait_tail",
        (*FN, "mmc_wait"),
        "serving",
        3,
        39,
        N_(
            "An M/M/c queue: {c} slots, arrivals {lam:g}/s, service {service_s:g} s per request. "
            "What is the probability that a request waits longer than {t:g} s?"
        ),
        _tail,
        lambda p, fn: fn(p["lam"], p["mu"], p["c"], p["t"])["p_wait_exceeds_t"],
        lambda p: [
            Step("=", N_("P(wait) = Erlang C"), _erlang(p)),
            Step(
                "×",
                N_("e^(−(cμ − λ)·t) = e^(−{c_mu_lam:g} × {t:g})"),
                math.exp(-(p["c"] * p["mu"] - p["lam"]) * p["t"]),
                args={"c_mu_lam": p["c"] * p["mu"] - p["lam"], "t": p["t"]},
            ),
        ],
        "ratio",
        ("%",),
        rtol=0.005,
    ),
    T(
        "l39.slots_for_slo",
        (*FN, "servers_for_wait_slo"),
        "serving",
        3,
        39,
        N_(
            "Requests arrive at {lam:g}/s (Poisson) and take {service_s:g} s each (exponential). "
            "How many serving slots keep P(wait > {t:g} s) ≤ {eps:.0%}?"
        ),
        _slo,
        lambda p, fn: fn(p["lam"], p["mu"], p["t"], p["eps"])["servers"],
        lambda p: [
            Step(
                "=",
                N_("the smallest c > λ/μ = {lam_mu:g} with C(c, A)·e^(−(cμ−λ)t) ≤ {eps:g} (there {slots_p_1:.4f})"),
                _slots(p)[0],
                args={"lam_mu": p["lam"] / p["mu"], "eps": p["eps"], "slots_p_1": _slots(p)[1]},
            )
        ],
        "1",
        rtol=1e-9,
        source=N_("sizing for a tail, not for utilization < 1"),
    ),
]


def _scale(rng: random.Random) -> Params:
    return {
        "cur": rng.choice([2, 3, 4, 8, 12]),
        "waiting": rng.choice([0, 10, 40, 75, 200]),
        "target": rng.choice([4, 5, 8, 10]),
        "kv": rng.choice([0.5, 0.7, 0.8, 0.9, 0.95]),
        "kv_t": 0.75,
    }


def _scale_steps(p: Params) -> list[Step]:
    from fractions import Fraction

    queue = math.ceil(Fraction(p["waiting"], p["target"]))
    kv = math.ceil(p["cur"] * Fraction(str(p["kv"])) / Fraction("0.75"))
    if queue >= kv:
        return [
            Step(
                "=",
                N_("queue term: ceil({waiting} / {target}) (the KV term gives {kv})"),
                max(queue, 1),
                args={"waiting": p["waiting"], "target": p["target"], "kv": kv},
            )
        ]
    return [
        Step(
            "=",
            N_("KV term: ceil({cur} × {kv} / 0.75) (the queue term gives {queue})"),
            max(kv, 1),
            args={"cur": p["cur"], "kv": p["kv"], "queue": queue},
        )
    ]


WINDOWS = ("5m", "30m", "1h", "6h", "3d")
RULES = ["page_fast", "page_slow", "ticket", "none"]


def _alerts(rng: random.Random) -> Params:
    slo = 0.999
    counts = {
        w: (
            rng.choice([0, 1, 2, 5, 10, 20, 40]) * (1 if w in ("5m", "30m") else 10),
            1000 if w in ("5m", "30m") else 10000,
        )
        for w in WINDOWS
    }
    return {"slo": slo, "counts": counts, "shown": ", ".join(f"{w}: {b}/{n}" for w, (b, n) in counts.items())}


TEMPLATES += [
    T(
        "l39.autoscale_replicas",
        (*FN, "autoscale_replicas"),
        "platform",
        2,
        39,
        N_(
            "{cur} serving pods; {waiting} requests wait across the fleet; each pod should hold "
            "at most {target} waiting; average KV-cache usage {kv:g} against a 0.75 target. How "
            "many replicas should the autoscaler ask for?"
        ),
        _scale,
        lambda p, fn: fn(p["cur"], p["waiting"], p["target"], p["kv"]),
        _scale_steps,
        "1",
        rtol=1e-9,
        source=N_("Kubernetes HPA: the larger of the metrics' desired replicas"),
    ),
    T(
        "l39.first_alert",
        (*FN, "burn_rate_alerts"),
        "operations",
        3,
        39,
        N_(
            "A 99.9 % SLO. Errors/requests per window: {shown}. Rules: page_fast when 1h and 5m "
            "both burn ≥ 14.4, page_slow when 6h and 30m both burn ≥ 6, ticket when 3d and 6h "
            "both burn ≥ 1. Which is the first rule (in that order) that fires?"
        ),
        _alerts,
        lambda p, fn: (fn({w: tuple(c) for w, c in p["counts"].items()}, p["slo"]) or ["none"])[0],
        lambda p: [
            Step("=", N_("{w}: burn {b_n_0_001:g}"), b / n / 0.001, args={"w": w, "b_n_0_001": b / n / 0.001})
            for w, (b, n) in p["counts"].items()
        ],
        kind="choice",
        options=lambda p: list(RULES),
        source=N_("Google SRE Workbook, ch. 5, table 5-8"),
    ),
]
