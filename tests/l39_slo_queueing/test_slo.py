"""L39 · Erlang C and M/M/c waits, slots for a wait SLO, burn rates and multi-window alerts, autoscaling."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "l39_slo_queueing"
erlang_c = learner(UNIT, "slo", "erlang_c")
mmc_wait = learner(UNIT, "slo", "mmc_wait")
servers_for_wait_slo = learner(UNIT, "slo", "servers_for_wait_slo")
burn_rate = learner(UNIT, "slo", "burn_rate")
budget_consumed = learner(UNIT, "slo", "budget_consumed")
burn_rate_alerts = learner(UNIT, "slo", "burn_rate_alerts")
autoscale_replicas = learner(UNIT, "slo", "autoscale_replicas")

REL = 1e-12


# ---- oracles, written independently of the recursion: exact rationals and the factorial form ----------


def erlang_c_exact(c: int, a: Fraction) -> Fraction:
    """P(wait) = (A^c/c! · c/(c−A)) / (Σ_{k<c} A^k/k! + A^c/c! · c/(c−A)), in exact rationals."""
    term, head = Fraction(1), Fraction(0)
    for k in range(c):
        head += term
        term = term * a / (k + 1)  # A^(k+1)/(k+1)!
    tail = term * c / (c - a)
    return tail / (head + tail)


def tail_exact(lam: float, mu: float, c: int, t: float) -> float:
    """C · e^{−(cμ−λ)t}: the exponential in floats, C exact."""
    return float(erlang_c_exact(c, Fraction(lam) / Fraction(mu))) * math.exp(-(c * mu - lam) * t)


# ---- erlang_c ----------------------------------------------------------------------------------


@grade(erlang_c, "correctness", points=3,
       hint="Does your formula survive c = 400? Factorials and powers overflow a float long before that.")
def test_erlang_c_worked_numbers():
    """C(2, 1) = 1/3; C(1, ρ) = ρ; C(400, 390) = 0.505554 (A^c/c! overflows a float)."""
    assert_number(erlang_c(2, 1.0), 1 / 3, "erlang_c(2, 1.0)", rel=REL)
    for rho in (0.1, 0.5, 0.9, 0.999):
        assert_number(erlang_c(1, rho), rho, f"erlang_c(1, {rho})", rel=REL)
    for c, a in [(24, 20.0), (400, 390.0), (1000, 999.0)]:
        got = erlang_c(c, a)
        assert_number(got, float(erlang_c_exact(c, Fraction(a))), f"erlang_c({c}, {a})", rel=1e-11)
    assert abs(erlang_c(400, 390.0) - 0.505554) < 5e-7, "erlang_c(400, 390) should round to 0.505554"
    assert_number(erlang_c(5, 0.0), 0.0, "erlang_c(5, 0.0): no load, nobody waits", abs_tol=1e-300)


@grade(erlang_c, "correctness", points=2,
       hint="P(wait) should fall when a slot is added and rise with the load: is B_c the right quantity?")
@given(c=st.integers(1, 50), frac=st.floats(0.001, 0.999))
def test_erlang_c_matches_factorial_form_and_is_monotone(c, frac):
    a = c * frac
    got = erlang_c(c, a)
    assert_number(got, float(erlang_c_exact(c, Fraction(a))), f"erlang_c({c}, {a!r})", rel=REL)
    more_slots = erlang_c(c + 1, a)
    assert more_slots < got, f"erlang_c({c + 1}, {a}) = {more_slots} should be below erlang_c({c}, {a}) = {got}"
    busier = erlang_c(c, min(a * 1.01, (a + c) / 2))
    assert busier > got, f"erlang_c({c}, a bit more than {a}) = {busier} should exceed {got}"


@grade(erlang_c, "correctness", points=1, hint="Raise ValueError naming the argument: is A >= c stable?",
       validation=True)
def test_erlang_c_rejects_bad_arguments():
    assert_rejects_all(erlang_c, [
        ((2, 2.0), "offered_load"),
        ((2, 3.5), "offered_load"),
        ((3, -0.5), "offered_load"),
        ((3, float("nan")), "offered_load"),
        ((0, 0.5), "servers"),
        ((2.0, 1.0), "servers"),
    ])


# ---- mmc_wait ----------------------------------------------------------------------------------

KEYS = ("utilization", "p_wait", "mean_wait_s", "mean_response_s", "p_wait_exceeds_t")


def mmc_oracle(lam: float, mu: float, c: int, t: float) -> dict[str, float]:
    p = float(erlang_c_exact(c, Fraction(lam) / Fraction(mu)))
    wait = p / (c * mu - lam)
    return {"utilization": lam / (c * mu), "p_wait": p, "mean_wait_s": wait, "mean_response_s": wait + 1 / mu,
            "p_wait_exceeds_t": tail_exact(lam, mu, c, t)}


def check_mmc(got: object, want: dict[str, float], call: str) -> None:
    assert isinstance(got, dict), f"{call}: expected a dict with keys {KEYS}, got {got!r}"
    for key in KEYS:
        assert key in got, f"{call}: missing key {key!r} (keys {KEYS})"
        assert_number(got[key], want[key], f"{call}[{key!r}]", rel=1e-11)


@grade(mmc_wait, "correctness", points=3,
       hint="Only the arrivals that wait (probability C) contribute to the mean wait; at what rate does a queue drain?")
def test_mmc_wait_worked_numbers():
    """λ 10/s, μ 0.5/s, 24 slots: ρ 0.8333, P(wait) 0.298072, mean wait 149.04 ms, P(wait > 0.5 s) 0.109655."""
    call = "mmc_wait(10.0, 0.5, 24, t_s=0.5)"
    got = mmc_wait(10.0, 0.5, 24, t_s=0.5)
    check_mmc(got, mmc_oracle(10.0, 0.5, 24, 0.5), call)
    for key, printed, tol in [("p_wait", 0.298072, 5e-7), ("mean_wait_s", 0.14904, 5e-6),
                              ("p_wait_exceeds_t", 0.109655, 5e-7)]:
        assert abs(got[key] - printed) < tol, f"{call}[{key!r}] = {got[key]}, the worked example prints {printed}"
    at_zero = mmc_wait(10.0, 0.5, 24)
    assert_number(at_zero["p_wait_exceeds_t"], at_zero["p_wait"], "mmc_wait(10, 0.5, 24)['p_wait_exceeds_t'] at t=0",
                  rel=REL)


@grade(mmc_wait, "correctness", points=2, hint="Mean response = mean wait + one service time, 1/μ.")
@given(c=st.integers(1, 40), frac=st.floats(0.01, 0.99), mu=st.sampled_from([0.25, 0.5, 1.0, 3.0, 40.0]),
       t=st.floats(0.0, 5.0))
def test_mmc_wait_closed_form(c, frac, mu, t):
    lam = c * mu * frac
    check_mmc(mmc_wait(lam, mu, c, t_s=t), mmc_oracle(lam, mu, c, t), f"mmc_wait({lam!r}, {mu}, {c}, t_s={t!r})")


@grade(mmc_wait, "correctness", points=1, hint="Raise ValueError: what happens when λ reaches c·μ?",
       validation=True)
def test_mmc_wait_rejects_bad_arguments():
    with pytest.raises(ValueError):
        got = mmc_wait(12.0, 0.5, 24)
        pytest.fail(f"mmc_wait(12.0, 0.5, 24) returned {got!r}: λ = c·μ never drains, raise ValueError")
    assert_rejects_all(mmc_wait, [
        ((10.0, 0.0, 24), "service_rate"),
        ((-1.0, 0.5, 24), "arrival_rate"),
        ((10.0, 0.5, 24.0), "servers"),
        ((10.0, 0.5, 24, -0.5), "t_s"),
    ])


# ---- servers_for_wait_slo ----------------------------------------------------------------------


def slots_oracle(lam: float, mu: float, t: float, eps: float) -> int:
    c = 1
    while Fraction(lam) >= c * Fraction(mu) or tail_exact(lam, mu, c, t) > eps:
        c += 1
    return c


@grade(servers_for_wait_slo, "correctness", points=3,
       hint="Utilisation below 1 only makes the queue stable; size for the tail P(wait > t), then whole replicas.")
def test_servers_worked_numbers():
    """λ 10/s, μ 0.5/s, P(wait > 0.5 s) <= 5 %, 8 slots per replica → 26 slots, 4 replicas (ρ < 1 alone: 21)."""
    call = "servers_for_wait_slo(10.0, 0.5, 0.5, 0.05, slots_per_replica=8)"
    got = servers_for_wait_slo(10.0, 0.5, 0.5, 0.05, slots_per_replica=8)
    assert isinstance(got, dict) and {"servers", "replicas"} <= set(got), (
        f"{call} = {got!r}: expected a dict with keys servers, replicas")
    assert_exact(got["servers"], 26, f"{call}['servers']",
                 why="P(wait > 0.5 s) is 0.059909 with 25 slots and 0.031997 with 26")
    assert_exact(got["replicas"], 4, f"{call}['replicas']", why="26 slots in replicas of 8: round up")
    one = servers_for_wait_slo(10.0, 0.5, 0.5, 0.05)
    assert_exact(one["replicas"], 26, "servers_for_wait_slo(10, 0.5, 0.5, 0.05)['replicas'] (1 slot each)")
    loose = servers_for_wait_slo(10.0, 0.5, 0.5, 1.0)
    assert_exact(loose["servers"], 21, "servers_for_wait_slo(10, 0.5, 0.5, max_violation=1.0)['servers']",
                 why="any violation allowed: the smallest stable c > λ/μ = 20")


@grade(servers_for_wait_slo, "correctness", points=2,
       hint="The smallest c that meets the SLO: is c − 1 either unstable or too slow? What if λ/μ is a whole number?")
@given(load=st.one_of(st.integers(0, 40).map(float), st.floats(0.05, 40.0)), mu=st.sampled_from([0.5, 1.0, 4.0]),
       t=st.sampled_from([0.0, 0.1, 0.5, 2.0]), eps=st.sampled_from([0.5, 0.2, 0.05, 0.01, 0.001]),
       slots=st.integers(1, 8))
def test_servers_minimal(load, mu, t, eps, slots):
    lam = load * mu
    call = f"servers_for_wait_slo({lam!r}, {mu}, {t}, {eps}, slots_per_replica={slots})"
    got = servers_for_wait_slo(lam, mu, t, eps, slots_per_replica=slots)
    want = slots_oracle(lam, mu, t, eps)
    assert_exact(got["servers"], want, f"{call}['servers']", why="the fewest stable slots meeting P(wait > t) <= ε")
    assert_exact(got["replicas"], -(-want // slots), f"{call}['replicas']", why="ceil(servers / slots_per_replica)")


@grade(servers_for_wait_slo, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_servers_rejects_bad_arguments():
    assert_rejects_all(servers_for_wait_slo, [
        ((10.0, 0.5, 0.5, 0.0), "max_violation"),
        ((10.0, 0.5, 0.5, 1.5), "max_violation"),
        ((10.0, 0.5, -0.5, 0.05), "wait_slo_s"),
        ((10.0, 0.0, 0.5, 0.05), "service_rate"),
        ((10.0, 0.5, 0.5, 0.05, 0), "slots_per_replica"),
        ((10.0, 0.5, 0.5, 0.05, 8.0), "slots_per_replica"),
    ])


# ---- burn_rate and budget_consumed -------------------------------------------------------------


@grade(burn_rate, "correctness", points=2,
       hint="1 − 0.999 in floats is 0.0010000000000000009: compute on the decimal values instead.")
def test_burn_rate_worked_numbers():
    """144 bad of 10,000 at 99.9 % is exactly 14.4 (floats: 14.399999999999986); no traffic burns nothing."""
    for args, want in [((144, 10_000, 0.999), 14.4), ((2, 100, 0.999), 20.0), ((8, 1000, 0.999), 8.0),
                       ((6, 1000, 0.999), 6.0), ((1, 1000, 0.999), 1.0), ((3, 1000, 0.99), 0.3),
                       ((0, 0, 0.999), 0.0), ((5, 5, 0.5), 2.0)]:
        got = burn_rate(*args)
        assert got == want, (f"burn_rate{args} = {got!r}, expected exactly {want!r}: (bad/total)/(1 − SLO) on exact "
                             "fractions, rounded once")


@grade(burn_rate, "correctness", points=1, hint="The burn rate is the error ratio divided by the error budget 1 − SLO.")
@given(total=st.integers(1, 10**7), share=st.floats(0, 1), slo=st.sampled_from([0.9, 0.99, 0.995, 0.999, 0.9999]))
def test_burn_rate_closed_form(total, share, slo):
    bad = int(total * share)
    want = float(Fraction(bad, total) / (1 - Fraction(str(slo))))
    assert_number(burn_rate(bad, total, slo), want, f"burn_rate({bad}, {total}, {slo})", rel=REL)


@grade(burn_rate, "correctness", points=1, hint="Raise ValueError naming the argument: can bad exceed total?",
       validation=True)
def test_burn_rate_rejects_bad_arguments():
    assert_rejects_all(burn_rate, [
        ((11, 10, 0.999), "bad"),
        ((-1, 10, 0.999), "bad"),
        ((1, 10.0, 0.999), "total"),
        ((1, 10, 1.0), "slo_target"),
        ((1, 10, 99.9), "slo_target"),
        ((1, 10, 0.0), "slo_target"),
    ])


@grade(budget_consumed, "correctness", points=2,
       hint="A fraction of the whole period's budget: burn × window / period, with everything in seconds.")
def test_budget_consumed_worked_numbers():
    """14.4 × 1 h → 2 %, 6 × 6 h → 5 %, 1 × 3 d → 10 % of a 30-day budget."""
    for args, want in [((14.4, 3600), 0.02), ((6, 6 * 3600), 0.05), ((1, 3 * 86_400), 0.10),
                       ((1, 30 * 86_400), 1.0), ((2.0, 3600, 7 * 86_400), 2 / 168), ((0, 3600), 0.0)]:
        assert_number(budget_consumed(*args), want, f"budget_consumed{args}", rel=REL, abs_tol=1e-300)


@grade(budget_consumed, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_budget_consumed_rejects_bad_arguments():
    assert_rejects_all(budget_consumed, [
        ((-1.0, 3600), "burn"),
        ((1.0, -3600), "window_s"),
        ((1.0, 3600, 0), "period_s"),
        ((1.0, 3600, float("inf")), "period_s"),
    ])


# ---- burn_rate_alerts --------------------------------------------------------------------------

WORKED = {"5m": (2, 100), "30m": (8, 1000), "1h": (30, 2000), "6h": (70, 12_000), "3d": (300, 500_000)}
RULES = (("page_fast", "1h", "5m", Fraction("14.4")), ("page_slow", "6h", "30m", Fraction(6)),
         ("ticket", "3d", "6h", Fraction(1)))


def alerts_oracle(windows: dict[str, tuple[int, int]], slo: float) -> list[str]:
    budget = 1 - Fraction(str(slo))
    burn = {w: (Fraction(b, n) / budget if n else Fraction(0)) for w, (b, n) in windows.items()}
    return [name for name, long, short, th in RULES if burn[long] >= th and burn[short] >= th]


def check_alerts(windows: dict, slo: float, want: list[str], why: str = "") -> None:
    got = burn_rate_alerts(windows, slo)
    assert got == want, f"burn_rate_alerts({windows}, {slo}) = {got!r}, expected {want!r}" + (f": {why}" if why else "")


@grade(burn_rate_alerts, "correctness", points=3,
       hint="Both windows of a rule must reach its threshold, and 'reach' includes equal: compare exact fractions.")
def test_alerts_worked_and_exact_thresholds():
    """Course windows → page_fast; 5m clean → nothing; burns exactly at 14.4, 6 and 1 fire."""
    check_alerts(WORKED, 0.999, ["page_fast"], "1h burns 15 and 5m burns 20, both >= 14.4")
    check_alerts({**WORKED, "5m": (0, 100)}, 0.999, [], "the short window has recovered: no page")
    at = {"5m": (144, 10_000), "1h": (144, 10_000), "30m": (6, 1000), "6h": (6, 1000), "3d": (1, 1000)}
    check_alerts(at, 0.999, ["page_fast", "page_slow", "ticket"],
                 "each burn is exactly its threshold (14.4, 6, 1); floats land just below all three")
    just_below = {**at, "1h": (143, 10_000), "6h": (5, 1000), "3d": (999, 1_000_000)}
    check_alerts(just_below, 0.999, [], "1h burns 14.3, 6h 5 and 3d 0.999: each rule has a window below its threshold")
    check_alerts({**at, "5m": (0, 0)}, 0.999, ["page_slow", "ticket"], "a window without traffic burns 0")


@grade(burn_rate_alerts, "correctness", points=2, hint="Which two windows does each rule look at, and in what order?")
@given(data=st.data(), slo=st.sampled_from([0.99, 0.999, 0.9995]))
def test_alerts_closed_form(data, slo):
    windows = {}
    for w in ("5m", "30m", "1h", "6h", "3d"):
        total = data.draw(st.integers(0, 5000), label=w)
        bad = data.draw(st.integers(0, min(total, max(1, total // 20))), label=f"{w} bad")
        windows[w] = (bad, total)
    check_alerts(windows, slo, alerts_oracle(windows, slo))


@grade(burn_rate_alerts, "correctness", points=1,
       hint="Raise ValueError naming `windows` when a window is missing or its counts are wrong.", validation=True)
def test_alerts_rejects_bad_arguments():
    missing = {k: v for k, v in WORKED.items() if k != "30m"}
    assert_rejects_all(burn_rate_alerts, [
        ((missing, 0.999), "windows"),
        (({**WORKED, "1h": (3000, 2000)}, 0.999), "windows"),
        (({**WORKED, "6h": (1, 2, 3)}, 0.999), "windows"),
        (({**WORKED, "3d": (1.0, 500_000)}, 0.999), "windows"),
        ((list(WORKED.items()), 0.999), "windows"),
        ((WORKED, 1.5), "slo_target"),
    ])


# ---- autoscale_replicas ------------------------------------------------------------------------


def autoscale_oracle(cur: int, waiting: int, target: int, usage: float, kv_t: float, low: int, high: int) -> int:
    by_queue = math.ceil(Fraction(waiting, target))
    by_kv = math.ceil(cur * Fraction(str(usage)) / Fraction(str(kv_t)))
    return min(high, max(low, by_queue, by_kv))


@grade(autoscale_replicas, "correctness", points=3,
       hint="total_waiting is already the whole fleet's queue: does it need multiplying by the replica count?")
def test_autoscale_worked_numbers():
    """3 pods, 40 waiting, 5 per pod, KV 0.9 → max(8, 4) = 8; KV at its target keeps the fleet (exact)."""
    cases = [
        ((3, 40, 5, 0.9), {}, 8, "ceil(40/5) = 8 beats ceil(3·0.9/0.75) = 4 (the lecture's ceil(40/5·3) = 24)"),
        ((3, 0, 5, 0.9), {}, 4, "ceil(3 · 0.9 / 0.75) = ceil(3.6)"),
        ((15, 0, 5, 0.7), {"kv_target": 0.7}, 15, "usage equal to the target holds 15 pods; floats say 16"),
        ((6, 0, 5, 0.9), {"kv_target": 0.6}, 9, "6 · 0.9 / 0.6 is exactly 9; in floats the ceiling gives 10"),
        ((12, 3, 5, 0.45), {"kv_target": 0.6}, 9, "12 · 0.45 / 0.6 is exactly 9; in floats the ceiling gives 10"),
        ((3, 40, 5, 0.9), {"max_replicas": 6}, 6, "clamped to max_replicas"),
        ((4, 0, 5, 0.0), {"min_replicas": 2}, 2, "an idle fleet shrinks to min_replicas"),
        ((0, 1, 5, 0.0), {"min_replicas": 0}, 1, "one waiting request wakes a fleet scaled to zero"),
    ]
    for args, kwargs, want, why in cases:
        shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        assert_exact(autoscale_replicas(*args, **kwargs), want, f"autoscale_replicas({shown})", why=why)


@grade(autoscale_replicas, "correctness", points=2,
       hint="max(ceil(waiting / target), ceil(current · usage / kv_target)), then clamp.")
@given(cur=st.integers(0, 200), waiting=st.integers(0, 2000), target=st.integers(1, 20),
       usage=st.sampled_from([0.0, 0.1, 0.3, 0.45, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 1.0]),
       kv_t=st.sampled_from([0.6, 0.7, 0.75, 0.8, 0.85]), low=st.integers(0, 5), extra=st.integers(0, 300))
def test_autoscale_closed_form(cur, waiting, target, usage, kv_t, low, extra):
    high = max(low, 1) + extra
    want = autoscale_oracle(cur, waiting, target, usage, kv_t, low, high)
    got = autoscale_replicas(cur, waiting, target, usage, kv_target=kv_t, min_replicas=low, max_replicas=high)
    assert_exact(got, want, f"autoscale_replicas({cur}, {waiting}, {target}, {usage}, kv_target={kv_t}, "
                 f"min_replicas={low}, max_replicas={high})", why="exact ceilings, the larger term, clamped")


@grade(autoscale_replicas, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_autoscale_rejects_bad_arguments():
    assert_rejects_all(autoscale_replicas, [
        ((3, 40, 0, 0.9), "target_waiting_per_pod"),
        ((3, 40.0, 5, 0.9), "total_waiting"),
        ((-1, 40, 5, 0.9), "current"),
        ((3, 40, 5, 1.5), "avg_kv_usage"),
        ((3, 40, 5, 0.9, 0.0), "kv_target"),
        ((3, 40, 5, 0.9, 0.75, 5, 2), "max_replicas"),
    ])
