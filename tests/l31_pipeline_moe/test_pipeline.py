"""L31 · GPipe and 1F1B orders, and a clock simulation of every stage: makespan, bubble, micro-batches in flight."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l31_pipeline_moe"
pipeline_orders = learner(UNIT, "pipeline", "pipeline_orders")
simulate_pipeline = learner(UNIT, "pipeline", "simulate_pipeline")

KEYS = ("makespan", "start", "busy", "bubble_fraction", "peak_in_flight", "timeline")


def as_list(x: object) -> object:
    """Lists and tuples alike, nested too: the contract names the items, not the sequence type."""
    return [as_list(v) for v in x] if isinstance(x, list | tuple) else x


# ---- oracles, written another way than the reference: a ticking clock and an in-flight limit ---------------


def orders_oracle(p: int, m: int, kind: str) -> list[list[tuple[str, int]]]:
    """GPipe: all F then all B. 1F1B: run a forward while fewer than min(p − s, m) micro-batches are in flight."""
    out = []
    for s in range(p):
        if kind == "gpipe":
            out.append([("F", i) for i in range(m)] + [("B", i) for i in range(m)])
            continue
        limit, ops, f, b = min(p - s, m), [], 0, 0
        while b < m:
            if f < m and f - b < limit:
                ops.append(("F", f))
                f += 1
            else:
                ops.append(("B", b))
                b += 1
        out.append(ops)
    return out


def waits_for(kind: str, s: int, i: int, p: int) -> tuple[int, str, int] | None:
    if kind == "F":
        return (s - 1, "F", i) if s else None
    return (s + 1, "B", i) if s < p - 1 else (s, "F", i)


def clock_oracle(orders, t_f: list[int], t_b: list[int]) -> dict | None:
    """Tick by tick: at each tick every idle stage starts its next operation if what it waits for has ended.

    Returns None when the orders deadlock (nothing runs, nothing can start, work is left)."""
    p, m = len(orders), len(orders[0]) // 2
    end: dict[tuple[int, str, int], int] = {}
    start: dict[tuple[int, str, int], int] = {}
    nxt, busy_until, t = [0] * p, [0] * p, 0
    timeline: list[list[tuple[int, int, str]]] = []
    while any(n < 2 * m for n in nxt) or any(b > t for b in busy_until):
        for s in range(p):
            if busy_until[s] > t or nxt[s] == 2 * m:
                continue
            kind, i = orders[s][nxt[s]]
            need = waits_for(kind, s, i, p)
            if need is None or end.get(need, t + 1) <= t:
                start[(s, kind, i)] = t
                busy_until[s] = end[(s, kind, i)] = t + (t_f[s] if kind == "F" else t_b[s])
                nxt[s] += 1
        running = [(s, i, k) for (s, k, i), t0 in start.items() if t0 <= t < end[(s, k, i)]]
        if not running:
            return None
        timeline.append(sorted(running))
        t += 1
    peaks = []
    for s in range(p):
        held = [sum(1 for i in range(m) if start[(s, "F", i)] <= u < end[(s, "B", i)]) for u in range(t)]
        peaks.append(max(held))
    busy = [m * (t_f[s] + t_b[s]) for s in range(p)]
    return {"makespan": t, "start": start, "busy": busy, "bubble_fraction": 1 - Fraction(sum(busy), p * t),
            "peak_in_flight": peaks, "timeline": timeline}


def check_result(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict) and set(KEYS) <= set(got), f"{call} = {got!r}: expected a dict with keys {KEYS}"
    assert_exact(got["makespan"], want["makespan"], f"{call}['makespan']", why="the end of the last operation")
    assert got["busy"] == want["busy"], f"{call}['busy'] = {got['busy']!r}, expected {want['busy']}: m·(t_F + t_B)"
    assert_number(got["bubble_fraction"], float(want["bubble_fraction"]), f"{call}['bubble_fraction']", rel=1e-12)
    starts = {key: got["start"].get(key) for key in want["start"]} if isinstance(got["start"], dict) else got["start"]
    bad = sorted(key for key in want["start"] if starts.get(key) != want["start"][key]) if isinstance(starts, dict) \
        else ["not a dict"]
    assert not bad, (f"{call}['start']: {bad[0]} starts at {starts.get(bad[0]) if isinstance(starts, dict) else starts}"
                     f", expected {want['start'].get(bad[0])}: an operation starts when its stage is free and what it "
                     "waits for has ended")
    assert got["peak_in_flight"] == want["peak_in_flight"], (
        f"{call}['peak_in_flight'] = {got['peak_in_flight']!r}, expected {want['peak_in_flight']}: micro-batches "
        "whose F has started and whose B has not ended (a B ending at t frees its slot before an F starting at t)")
    timeline = [sorted(tuple(x) for x in ops) for ops in got["timeline"]]
    if timeline != want["timeline"]:
        t = next((u for u, (a, b) in enumerate(zip(timeline, want["timeline"], strict=False)) if a != b),
                 min(len(timeline), len(want["timeline"])))
        raise AssertionError(f"{call}['timeline'] has {len(timeline)} ticks (expected {want['makespan']}); at tick {t} "
                             f"it lists {timeline[t] if t < len(timeline) else 'nothing'}, expected "
                             f"{want['timeline'][t] if t < len(want['timeline']) else 'nothing'} (stage, micro-batch, "
                             "kind) running in [t, t+1)")


# ---- pipeline_orders ---------------------------------------------------------------------------------------


@grade(pipeline_orders, "correctness", points=2,
       hint="How many forwards can stage s start before the first backward comes back from the last stage?")
def test_orders_worked_example():
    """p=4, m=8: 1F1B stage 0 is F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7; the last stage has no warm-up."""
    got = pipeline_orders(4, 8, "1f1b")
    stage0 = [("F", 0), ("F", 1), ("F", 2), ("F", 3), ("B", 0), ("F", 4), ("B", 1), ("F", 5), ("B", 2), ("F", 6),
              ("B", 3), ("F", 7), ("B", 4), ("B", 5), ("B", 6), ("B", 7)]
    assert [tuple(op) for op in got[0]] == stage0, (
        f"pipeline_orders(4, 8, '1f1b')[0] = {got[0]!r}, expected {stage0}: min(p − s − 1, m) = 3 warm-up forwards, "
        "then F and B in turn, F first")
    last = [op for i in range(8) for op in (("F", i), ("B", i))]
    assert [tuple(op) for op in got[3]] == last, f"pipeline_orders(4, 8, '1f1b')[3] = {got[3]!r}, expected {last}"
    gpipe = pipeline_orders(2, 3, "gpipe")
    want = [[("F", 0), ("F", 1), ("F", 2), ("B", 0), ("B", 1), ("B", 2)]] * 2
    assert [[tuple(op) for op in s] for s in gpipe] == want, (
        f"pipeline_orders(2, 3, 'gpipe') = {gpipe!r}, expected {want}")


@grade(pipeline_orders, "correctness", points=2,
       hint="With fewer micro-batches than stages, can a stage warm up with more forwards than there are?")
@settings(max_examples=25)
@given(p=st.integers(1, 8), m=st.integers(1, 12), kind=st.sampled_from(["gpipe", "1f1b"]))
def test_orders_match_the_in_flight_rule(p, m, kind):
    got = [[tuple(op) for op in stage] for stage in pipeline_orders(p, m, kind)]
    want = orders_oracle(p, m, kind)
    assert len(got) == p, f"pipeline_orders({p}, {m}, {kind!r}) has {len(got)} stages, expected {p}"
    for s in range(p):
        assert got[s] == want[s], (f"pipeline_orders({p}, {m}, {kind!r})[{s}] = {got[s]}, expected {want[s]}"
                                   + (f": at most min(p − s, m) = {min(p - s, m)} in flight" if kind == "1f1b" else ""))


@grade(pipeline_orders, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_orders_reject_bad_arguments():
    assert_rejects_all(pipeline_orders, [
        ((4, 8, "interleaved"), "kind"),
        ((4, 8, "1F1B "), "kind"),
        ((0, 8, "gpipe"), "p"),
        ((4, 0, "1f1b"), "m"),
        ((4.0, 8, "1f1b"), "p"),
    ])


# ---- simulate_pipeline -------------------------------------------------------------------------------------

P2M2_TIMELINE = [[(0, 0, "F")], [(0, 1, "F"), (1, 0, "F")], [(1, 1, "F")], [(1, 0, "B")],
                 [(0, 0, "B"), (1, 1, "B")], [(0, 1, "B")]]
# p=2, m=3, 1F1B, unit times, by hand: stage 0 runs F0 | F1 B0 | F2 B1 | B2, stage 1 F0 B0 F1 B1 F2 B2. Stage 0's
# B0 waits for stage 1's B0 (ends at 3); at tick 4 its B0 ends as its F2 starts: 2 in flight, not 3.
P2M3_1F1B_TIMELINE = [[(0, 0, "F")], [(0, 1, "F"), (1, 0, "F")], [(1, 0, "B")], [(0, 0, "B"), (1, 1, "F")],
                      [(0, 2, "F"), (1, 1, "B")], [(0, 1, "B"), (1, 2, "F")], [(1, 2, "B")], [(0, 2, "B")]]


@grade(simulate_pipeline, "correctness", points=3,
       hint="Which operation does B(s, i) wait for, and when does a stage start its next operation?")
def test_simulate_hand_worked_schedules():
    """p=2, m=2 GPipe and p=2, m=3 1F1B on unit times, worked by hand; p=4, m=8 (t_F 1, t_B 2): makespan 33,
    bubble 3/11, peaks."""
    call = "simulate_pipeline(pipeline_orders(2, 2, 'gpipe'), 1, 1)"
    got = simulate_pipeline([[("F", 0), ("F", 1), ("B", 0), ("B", 1)]] * 2, 1, 1)
    check_result(got, {**clock_oracle([[("F", 0), ("F", 1), ("B", 0), ("B", 1)]] * 2, [1, 1], [1, 1]),
                       "timeline": P2M2_TIMELINE}, call)
    orders = [[("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("B", 2)],
              [("F", 0), ("B", 0), ("F", 1), ("B", 1), ("F", 2), ("B", 2)]]
    got = simulate_pipeline(orders, 1, 1)
    check_result(got, {**clock_oracle(orders, [1, 1], [1, 1]), "timeline": P2M3_1F1B_TIMELINE},
                 "simulate_pipeline(pipeline_orders(2, 3, '1f1b'), 1, 1)")
    assert as_list(got["peak_in_flight"]) == [2, 1], f"simulate_pipeline(<1F1B p=2, m=3>, 1, 1)['peak_in_flight'] = " \
                                            f"{got['peak_in_flight']}, expected [2, 1]"
    for kind, peaks in (("gpipe", [8, 8, 8, 8]), ("1f1b", [4, 3, 2, 1])):
        call = f"simulate_pipeline(<{kind} orders, p=4, m=8>, 1, 2)"
        got = simulate_pipeline(orders_oracle(4, 8, kind), 1, 2)
        assert_exact(got["makespan"], 33, f"{call}['makespan']", why="(m + p − 1)(t_F + t_B) = 11 · 3")
        assert_number(got["bubble_fraction"], 3 / 11, f"{call}['bubble_fraction']", rel=1e-12)
        assert got["peak_in_flight"] == peaks, f"{call}['peak_in_flight'] = {got['peak_in_flight']}, expected {peaks}"


@grade(simulate_pipeline, "correctness", points=2,
       hint="With a slow third stage, does the closed form (p−1)/(m+p−1) still give the idle share?")
def test_simulate_per_stage_times():
    """t_F = [1, 1, 2, 1], t_B = [2, 2, 4, 2], p=4, m=8: GPipe 57 (bubble 0.473684), 1F1B 55 (0.454545)."""
    for kind, makespan, bubble in (("gpipe", 57, 9 / 19), ("1f1b", 55, 5 / 11)):
        orders = orders_oracle(4, 8, kind)
        call = f"simulate_pipeline(<{kind} orders, p=4, m=8>, [1, 1, 2, 1], [2, 2, 4, 2])"
        got = simulate_pipeline(orders, [1, 1, 2, 1], [2, 2, 4, 2])
        assert_exact(got["makespan"], makespan, f"{call}['makespan']", why="the slow stage sets the pace")
        assert_number(got["bubble_fraction"], bubble, f"{call}['bubble_fraction']", rel=1e-12)
        check_result(got, clock_oracle(orders, [1, 1, 2, 1], [2, 2, 4, 2]), call)


@st.composite
def any_orders(draw):
    """Random stage orders (each stage: its F's and B's in micro-batch order, interleaved at random, F_i before B_i)."""
    p, m = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    orders = []
    for _ in range(p):
        ops, f, b = [], 0, 0
        while b < m:
            if f < m and (f == b or draw(st.booleans())):
                ops.append(("F", f))
                f += 1
            else:
                ops.append(("B", b))
                b += 1
        orders.append(ops)
    return orders


@grade(simulate_pipeline, "correctness", points=3,
       hint="Simulate any valid orders, not only the two schedules: each operation waits for its stage and for "
            "one other operation.")
@settings(max_examples=30)
@given(orders=any_orders(), data=st.data())
def test_simulate_matches_a_ticking_clock(orders, data):
    p = len(orders)
    t_f = data.draw(st.one_of(st.integers(1, 3), st.lists(st.integers(1, 4), min_size=p, max_size=p)))
    t_b = data.draw(st.one_of(st.integers(1, 3), st.lists(st.integers(1, 4), min_size=p, max_size=p)))
    tf = [t_f] * p if isinstance(t_f, int) else t_f
    tb = [t_b] * p if isinstance(t_b, int) else t_b
    call = f"simulate_pipeline({orders}, {t_f}, {t_b})"
    want = clock_oracle(orders, tf, tb)
    if want is None:
        with pytest.raises(ValueError, match="deadlock"):
            got = simulate_pipeline(orders, t_f, t_b)
            pytest.fail(f"{call} returned {got!r}: these orders deadlock, raise ValueError('orders deadlock ...')")
        return
    check_result(simulate_pipeline(orders, t_f, t_b), want, call)


@grade(simulate_pipeline, "correctness", points=2,
       hint="GPipe keeps every micro-batch's activations until the backwards start; how many does 1F1B keep?")
@settings(max_examples=25)
@given(p=st.integers(1, 6), m=st.integers(1, 10), t_f=st.integers(1, 3), t_b=st.integers(1, 4),
       kind=st.sampled_from(["gpipe", "1f1b"]))
def test_simulate_closed_forms(p, m, t_f, t_b, kind):
    """Equal stages: makespan (m+p−1)(t_F+t_B), bubble (p−1)/(m+p−1) for both; peak m (GPipe), min(p−s, m) (1F1B)."""
    call = f"simulate_pipeline(<{kind} orders, p={p}, m={m}>, {t_f}, {t_b})"
    got = simulate_pipeline(orders_oracle(p, m, kind), t_f, t_b)
    assert_exact(got["makespan"], (m + p - 1) * (t_f + t_b), f"{call}['makespan']", why="(m + p − 1)(t_F + t_B)")
    assert_number(got["bubble_fraction"], (p - 1) / (m + p - 1), f"{call}['bubble_fraction']", rel=1e-12)
    peaks = [m] * p if kind == "gpipe" else [min(p - s, m) for s in range(p)]
    assert got["peak_in_flight"] == peaks, (f"{call}['peak_in_flight'] = {got['peak_in_flight']}, expected {peaks}: "
                                            "a B that ends at t frees its slot before an F that starts at t")


@grade(simulate_pipeline, "correctness", points=1,
       hint="Raise ValueError naming the argument; what should happen when no stage can ever move?", validation=True)
def test_simulate_rejects_bad_orders_and_deadlocks():
    good = [[("F", 0), ("F", 1), ("B", 0), ("B", 1)]] * 2
    assert_rejects_all(simulate_pipeline, [
        (([[("F", 0), ("F", 1), ("B", 0), ("B", 1)], [("F", 0), ("B", 0), ("B", 1)]], 1, 1), "orders"),
        (([[("F", 0), ("B", 0), ("B", 1), ("F", 1)], good[0]], 1, 1), "orders"),
        (([[("F", 0), ("F", 0), ("B", 0), ("B", 1)], good[0]], 1, 1), "orders"),
        (([[("F", 0), ("X", 1), ("B", 0), ("B", 1)], good[0]], 1, 1), "orders"),
        ((good, 0, 1), "t_fwd"),
        ((good, 1, [1, 2, 3]), "t_bwd"),
        ((good, 1.5, 1), "t_fwd"),
    ])
    deadlock = [[("F", 0), ("B", 0), ("F", 1), ("B", 1)], [("F", 1), ("F", 0), ("B", 0), ("B", 1)]]
    assert_rejects(simulate_pipeline, (deadlock, 1, 1), None)
    with pytest.raises(ValueError, match="deadlock"):
        simulate_pipeline(deadlock, 1, 1)
