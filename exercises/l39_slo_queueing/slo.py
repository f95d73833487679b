"""L39 · Serving slots for a waiting-time SLO (Erlang C), error-budget burn-rate alerts, autoscaling.

Lecture 39 (07_云原生AI平台与生产工程/39_生产级AI_Serving高可用_可观测与SLO治理.md) scales on queue
depth and KV-cache usage. This module adds the two questions behind those knobs:

* How many serving slots does a waiting-time SLO need? Requests arrive at λ per second (Poisson),
  each slot serves at μ per second (exponential service): the M/M/c queue. With offered load
  A = λ/μ (in Erlangs) and c slots, Erlang C gives the probability an arrival has to wait, and a
  waiting arrival waits an exponential time of rate cμ − λ. Utilisation below 1 only says the queue
  is stable, not that waits are short.
* When should someone be paged? The error budget of an SLO of 99.9 % is 0.1 % of requests; the burn
  rate is the observed error ratio over the budget (1 = the budget lasts exactly the SLO period).
  Multi-window alerts fire when a long AND a short window both burn at or above a threshold.

Conventions: rates per second, times in seconds, counts as exact ints; thresholds and ceilings are
computed exactly on the decimal values given (``Fraction(str(x))``); invalid arguments raise
ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

MONTH_S = 30 * 86_400  # the SLO period: 30 days
WINDOWS = ("5m", "30m", "1h", "6h", "3d")
# (rule, long window, short window, burn-rate threshold): the SRE Workbook's multi-window alerts.
RULES = (
    ("page_fast", "1h", "5m", Fraction("14.4")),
    ("page_slow", "6h", "30m", Fraction(6)),
    ("ticket", "3d", "6h", Fraction(1)),
)


def _check_real(name: str, value: object, *, low: float = 0.0, positive: bool = False, high: float | None = None
                ) -> float:
    """``value`` as a finite float in [low, high] (> low when ``positive``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < low or (positive and value <= low) or (high is not None and value > high):
        bound = f"{'>' if positive else '>='} {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"{name} must be {bound}, got {value!r}")
    return float(value)


def exact(x: int | float) -> Fraction:
    """The decimal value a person typed: 0.999 is 999/1000, not the nearest binary float."""
    return Fraction(x) if isinstance(x, int) else Fraction(str(x))


def _check_slo(slo_target: object) -> Fraction:
    if isinstance(slo_target, bool) or not isinstance(slo_target, int | float) or not 0 < slo_target < 1:
        raise ValueError(f"slo_target must be a fraction strictly between 0 and 1 (0.999), got {slo_target!r}")
    return exact(slo_target)


# ---------------------------------------------------------------------------------------------
# 1. Erlang C and the M/M/c queue
# ---------------------------------------------------------------------------------------------


def erlang_c(servers: int, offered_load: float) -> float:
    """P(wait) in an M/M/c queue with ``servers`` = c slots and ``offered_load`` A = λ/μ < c Erlangs.

    Erlang B by its recursion, B_0 = 1, B_k = A·B_{k−1} / (k + A·B_{k−1}); then
    C = B_c / (1 − (A/c)(1 − B_c)). The textbook form with A^c/c! overflows a float long before c
    gets large: C(400, 390) raises OverflowError there, while the recursion gives 0.505554.
    Worked: C(2, 1) = 1/3; C(1, ρ) = ρ. ValueError (naming ``offered_load``) when A >= c.
    """
    c = check_int("servers", servers, 1)
    a = _check_real("offered_load", offered_load)
    if a >= c:
        raise ValueError(f"offered_load = {a} Erlangs needs more than servers = {c}: the queue grows without bound")
    # TODO: the Erlang-B recursion over k = 1..c, then Erlang C from B_c (no factorials, no powers).
    raise NotImplementedError('TODO: the Erlang-B recursion over k = 1..c, then Erlang C from B_c (no factorials, no powers).')


def _check_queue(arrival_rate: object, service_rate: object, servers: object) -> tuple[float, float, int]:
    lam = _check_real("arrival_rate", arrival_rate)
    mu = _check_real("service_rate", service_rate, positive=True)
    c = check_int("servers", servers, 1)
    if lam >= c * mu:
        raise ValueError(f"arrival_rate = {lam}/s reaches the capacity of servers = {c} × {mu}/s: unstable queue")
    return lam, mu, c


def mmc_wait(arrival_rate: float, service_rate: float, servers: int, t_s: float = 0.0) -> dict[str, float]:
    """Waiting-time figures of an M/M/c queue (λ = ``arrival_rate``/s, μ = ``service_rate``/s per slot).

    Returns {"utilization": λ/(cμ), "p_wait": C(c, λ/μ), "mean_wait_s": C/(cμ − λ),
    "mean_response_s": mean wait + 1/μ, "p_wait_exceeds_t": C·e^{−(cμ−λ)·t_s}}.
    Worked: λ 10/s, μ 0.5/s (2 s per request), c 24 → ρ 0.8333, P(wait) 0.298072, mean wait
    149.04 ms, P(wait > 0.5 s) 0.109655. ValueError when λ >= cμ (unstable) or t_s < 0.
    """
    lam, mu, c = _check_queue(arrival_rate, service_rate, servers)
    t = _check_real("t_s", t_s)
    # TODO: utilisation, P(wait) from erlang_c, the mean wait, the response time and the tail at t.
    raise NotImplementedError('TODO: utilisation, P(wait) from erlang_c, the mean wait, the response time and the tail at t.')


def servers_for_wait_slo(
    arrival_rate: float, service_rate: float, wait_slo_s: float, max_violation: float, slots_per_replica: int = 1
) -> dict[str, int]:
    """Fewest slots c > λ/μ with P(wait > ``wait_slo_s``) <= ``max_violation``, and the replicas holding them.

    Returns {"servers": c, "replicas": ceil(c / slots_per_replica)}. Worked: λ 10/s, μ 0.5/s,
    P(wait > 0.5 s) <= 5 %, 8 slots per replica → 26 slots (0.031997; 25 gives 0.059909), 4 replicas.
    Sizing only for utilisation < 1 stops at 21 slots, where 59 % of requests wait over 0.5 s.
    """
    lam = _check_real("arrival_rate", arrival_rate)
    mu = _check_real("service_rate", service_rate, positive=True)
    t = _check_real("wait_slo_s", wait_slo_s)
    eps = _check_real("max_violation", max_violation, positive=True, high=1.0)
    slots = check_int("slots_per_replica", slots_per_replica, 1)
    # TODO: start at the smallest stable c (careful when λ/μ is a whole number), grow c until the
    #  tail meets the SLO, then round the slots up to whole replicas.
    raise NotImplementedError('TODO: start at the smallest stable c (careful when λ/μ is a whole number), grow c until the tail meets the SLO, then round the slots up to whole replicas.')


# ---------------------------------------------------------------------------------------------
# 2. Error budgets and burn-rate alerts
# ---------------------------------------------------------------------------------------------


def _check_counts(bad: object, total: object, name: str = "") -> tuple[int, int]:
    b = check_int(name or "bad", bad)
    n = check_int(name or "total", total)
    if b > n:
        raise ValueError(f"{name or 'bad'} = {b} bad requests out of total = {n}: bad cannot exceed total")
    return b, n


def burn_rate(bad: int, total: int, slo_target: float) -> float:
    """How fast the error budget burns: (bad/total) / (1 − slo_target); 0.0 when total = 0.

    Computed exactly, then rounded once: 144 bad of 10,000 at 99.9 % burns 14.4 (plain floats give
    14.399999999999986, just under the paging threshold). ValueError for bad > total or a target
    outside (0, 1).
    """
    b, n = _check_counts(bad, total)
    slo = _check_slo(slo_target)
    # TODO: the error ratio over the budget, on exact fractions.
    raise NotImplementedError('TODO: the error ratio over the budget, on exact fractions.')


def budget_consumed(burn: float, window_s: float, period_s: float = MONTH_S) -> float:
    """Share of the period's error budget spent by burning at ``burn`` for ``window_s`` seconds.

    burn · window / period: 14.4 for 1 h of 30 days → 0.02; 6 for 6 h → 0.05; 1 for 3 days → 0.10.
    """
    rate = _check_real("burn", burn)
    window = _check_real("window_s", window_s)
    period = _check_real("period_s", period_s, positive=True)
    # TODO: the fraction of the budget (not a percentage), exact on the decimals given.
    raise NotImplementedError('TODO: the fraction of the budget (not a percentage), exact on the decimals given.')


def _check_windows(windows: object) -> dict[str, tuple[int, int]]:
    if not isinstance(windows, Mapping) or any(w not in windows for w in WINDOWS):
        raise ValueError(f"windows must map each of {WINDOWS} to (bad, total), got {windows!r}")
    out = {}
    for w in WINDOWS:
        pair = windows[w]
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"windows[{w!r}] must be a (bad, total) pair, got {pair!r}")
        out[w] = _check_counts(pair[0], pair[1], f"windows[{w!r}]")
    return out


def burn_rate_alerts(windows: Mapping[str, tuple[int, int]], slo_target: float) -> list[str]:
    """The multi-window burn-rate rules that fire, in the order page_fast, page_slow, ticket.

    ``windows`` maps "5m", "30m", "1h", "6h", "3d" to (bad, total) counted over that window. A rule
    fires when both of its windows burn at or above its threshold: page_fast 1h & 5m >= 14.4,
    page_slow 6h & 30m >= 6, ticket 3d & 6h >= 1. Burns are compared exactly. Worked at 99.9 %:
    5m (2, 100), 30m (8, 1000), 1h (30, 2000), 6h (70, 12000), 3d (300, 500000) burn 20, 8, 15,
    5.833, 0.6 → ["page_fast"]; with 5m at (0, 100) → [].
    """
    counts = _check_windows(windows)
    slo = _check_slo(slo_target)
    # TODO: each window's exact burn, then every rule whose long AND short windows reach its threshold.
    raise NotImplementedError("TODO: each window's exact burn, then every rule whose long AND short windows reach its threshold.")


# ---------------------------------------------------------------------------------------------
# 3. Autoscaling on queue depth and KV-cache usage
# ---------------------------------------------------------------------------------------------


def autoscale_replicas(
    current: int,
    total_waiting: int,
    target_waiting_per_pod: int,
    avg_kv_usage: float,
    kv_target: float = 0.75,
    min_replicas: int = 1,
    max_replicas: int = 1_000_000,
) -> int:
    """Replicas wanted: max(ceil(waiting / target), ceil(current · usage / kv_target)), clamped.

    The queue term divides the fleet's total waiting requests by the depth one pod may hold; the KV
    term is Kubernetes' HPA rule on an average. Exact on decimals. Worked: 3 pods, 40 waiting,
    target 5, KV 0.9 → max(8, 4) = 8 (the lecture's ceil(40/5 · 3) = 24 counts the fleet twice).
    """
    cur = check_int("current", current)
    waiting = check_int("total_waiting", total_waiting)
    target = check_int("target_waiting_per_pod", target_waiting_per_pod, 1)
    usage = _check_real("avg_kv_usage", avg_kv_usage, high=1.0)
    kv_t = _check_real("kv_target", kv_target, positive=True, high=1.0)
    low = check_int("min_replicas", min_replicas)
    high = check_int("max_replicas", max_replicas, max(low, 1))
    # TODO: the two terms on exact values, the larger one, clamped to [min_replicas, max_replicas].
    raise NotImplementedError('TODO: the two terms on exact values, the larger one, clamped to [min_replicas, max_replicas].')
