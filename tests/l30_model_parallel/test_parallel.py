"""L30 · pipeline bubbles (two definitions), the 1F1B schedule, Megatron's rank groups, TP traffic."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import MODELS
from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l30_model_parallel"
pipeline_bubble_time_fraction = learner(UNIT, "parallel", "pipeline_bubble_time_fraction")
pipeline_bubble_ratio = learner(UNIT, "parallel", "pipeline_bubble_ratio")
one_f_one_b_schedule = learner(UNIT, "parallel", "one_f_one_b_schedule")
megatron_groups = learner(UNIT, "parallel", "megatron_groups")
tp_allreduce_bytes_per_layer = learner(UNIT, "parallel", "tp_allreduce_bytes_per_layer")

pipelines = dict(p=st.integers(1, 64), m=st.integers(1, 512), v=st.integers(1, 8))


def assert_fraction(got: object, want: Fraction, what: str) -> None:
    """A float (not an int, not a Fraction) equal to the exact fraction ``want`` up to float rounding."""
    assert isinstance(got, float), f"{what} = {got!r}: return a float, not {type(got).__name__}"
    assert_number(got, float(want), f"{what} (exactly {want} = {float(want):.6g})", rel=1e-12)


# ---- pipeline_bubble_time_fraction -------------------------------------------------------------


@grade(pipeline_bubble_time_fraction, "correctness", points=2,
       hint="Count time in chunks: how many chunk-times does a stage wait during warm-up and cool-down?")
def test_time_fraction_worked_numbers():
    """Course table (p=4): m=16 → 3/19 = 15.8 %, v=2 → 3/35 = 8.6 %; naive (m=1) → 3/4; one stage → 0."""
    for args, want in [
        ((4, 16, 1), Fraction(3, 19)),
        ((4, 16, 2), Fraction(3, 35)),
        ((4, 1, 1), Fraction(3, 4)),
        ((1, 8, 1), Fraction(0)),
        ((8, 64, 1), Fraction(7, 71)),
    ]:
        assert_fraction(pipeline_bubble_time_fraction(*args), want, f"pipeline_bubble_time_fraction{args}")


@grade(pipeline_bubble_time_fraction, "correctness", points=2,
       hint="Which of p and m is the number of stages? The bubble must vanish as micro-batches grow.")
@given(**pipelines)
def test_time_fraction_closed_form_and_limits(p, m, v):
    """(p−1)/(v·m + p−1): in [0, 1), shrinking as m or v grows, → 0 as m → ∞."""
    got = pipeline_bubble_time_fraction(p, m, v)
    assert_fraction(got, Fraction(p - 1, v * m + p - 1), f"pipeline_bubble_time_fraction({p}, {m}, {v})")
    assert pipeline_bubble_time_fraction(p, m + 1, v) <= got, f"the bubble must not grow from m={m} to m={m + 1}"
    assert pipeline_bubble_time_fraction(p, 10**9, v) < 1e-7, "the bubble must vanish as m grows"


@grade(pipeline_bubble_time_fraction, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize(
    "args, name", [((0, 16), "p"), ((4, 0), "m"), ((4, 16, 0), "v"), ((4.0, 16), "p"), ((4, 16.5), "m")]
)
def test_time_fraction_rejects_bad_arguments(args, name):
    assert_rejects(pipeline_bubble_time_fraction, args, name)


# ---- pipeline_bubble_ratio ---------------------------------------------------------------------


@grade(pipeline_bubble_ratio, "correctness", points=2,
       hint="Megatron divides the bubble by the ideal time, not by the total time.")
def test_ratio_worked_numbers():
    """Megatron-LM (2104.04473): p=4, m=16 → 3/16 = 18.75 %; interleaved v=2 → 3/32 = 9.375 %."""
    for args, want in [
        ((4, 16, 1), Fraction(3, 16)),
        ((4, 16, 2), Fraction(3, 32)),
        ((1, 4, 1), Fraction(0)),
        ((35, 192, 1), Fraction(34, 192)),
    ]:
        assert_fraction(pipeline_bubble_ratio(*args), want, f"pipeline_bubble_ratio{args}")


@grade(pipeline_bubble_ratio, "correctness", points=2,
       hint="bubble/ideal and bubble/total describe the same schedule: how do they convert?")
@given(**pipelines)
def test_ratio_closed_form_and_consistency(p, m, v):
    """(p−1)/(v·m), and ratio = f / (1 − f) with f the time fraction (the same bubble, two denominators)."""
    got = pipeline_bubble_ratio(p, m, v)
    assert_fraction(got, Fraction(p - 1, v * m), f"pipeline_bubble_ratio({p}, {m}, {v})")
    f = Fraction(p - 1, v * m + p - 1)
    assert_fraction(got, f / (1 - f), f"pipeline_bubble_ratio({p}, {m}, {v}) vs the time fraction {f}")


@grade(pipeline_bubble_ratio, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 16), "p"), ((4, 0), "m"), ((4, 16, -1), "v"), ((4, 16.0), "m")])
def test_ratio_rejects_bad_arguments(args, name):
    assert_rejects(pipeline_bubble_ratio, args, name)


# ---- one_f_one_b_schedule ----------------------------------------------------------------------

T_F, T_B = 1, 2  # a backward costs two forwards


def check_stage(actions: object, p: int, m: int, s: int) -> int:
    """Each micro-batch forward then backward, once each, in order; returns the peak in flight."""
    call = f"one_f_one_b_schedule({p}, {m}, stage={s})"
    assert isinstance(actions, list), f"{call}: expected a list of ('F'|'B', i), got {actions!r}"
    acts = [tuple(a) for a in actions]
    assert [a for a in acts if a[0] == "F"] == [("F", i) for i in range(m)], (
        f"{call}: forwards must be F0..F{m - 1} in order: {acts}"
    )
    assert [a for a in acts if a[0] == "B"] == [("B", i) for i in range(m)], (
        f"{call}: backwards must be B0..B{m - 1} in order: {acts}"
    )
    in_flight = peak = 0
    for kind, i in acts:
        in_flight += 1 if kind == "F" else -1
        assert in_flight >= 0, f"{call}: B{i} runs before F{i}: {acts}"
        peak = max(peak, in_flight)
    return peak


def simulate(schedules: list[list[tuple[str, int]]]) -> int | None:
    """Finish time of the whole pipeline, or None if it deadlocks (F needs the previous stage, B the next)."""
    p, done, clock, pos = len(schedules), {}, [0] * len(schedules), [0] * len(schedules)
    progress = True
    while progress:
        progress = False
        for s in range(p):
            while pos[s] < len(schedules[s]):
                kind, i = schedules[s][pos[s]]
                deps = [("F", s - 1, i)] if kind == "F" and s > 0 else []
                deps += [("B", s + 1, i)] if kind == "B" and s < p - 1 else []
                deps += [("F", s, i)] if kind == "B" else []
                if any(d not in done for d in deps):
                    break
                start = max([clock[s]] + [done[d] for d in deps])
                clock[s] = done[(kind, s, i)] = start + (T_F if kind == "F" else T_B)
                pos[s], progress = pos[s] + 1, True
    return max(clock) if all(pos[s] == len(schedules[s]) for s in range(p)) else None


@grade(one_f_one_b_schedule, "correctness", points=3,
       hint="Stage s warms up with p−s−1 forwards; then each forward is followed by the oldest backward.")
def test_schedule_worked_example():
    """p=4, m=8: stage 0 = F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7; the last stage alternates from the start."""

    def parse(text):
        return [(t[0], int(t[1:])) for t in text.split()]

    want = {
        0: "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
        3: "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
        2: "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
    }
    for stage, text in want.items():
        got = [tuple(a) for a in one_f_one_b_schedule(4, 8, stage)]
        assert got == parse(text), f"one_f_one_b_schedule(4, 8, stage={stage}) = {got}, expected {text}"


@grade(one_f_one_b_schedule, "correctness", points=3,
       hint="GPipe also runs, but keeps every micro-batch in flight: 1F1B caps stage s at p−s.")
@given(p=st.integers(1, 8), m=st.integers(1, 16))
def test_schedule_runs_with_the_1f1b_bubble(p, m):
    """All stages together never deadlock and finish in (m+p−1)·(t_F+t_B).

    Stage s holds at most min(p−s, m) micro-batches in flight.
    """
    schedules = [[tuple(a) for a in one_f_one_b_schedule(p, m, s)] for s in range(p)]
    for s, acts in enumerate(schedules):
        peak = check_stage(acts, p, m, s)
        assert_exact(peak, min(p - s, m), f"micro-batches in flight in one_f_one_b_schedule({p}, {m}, stage={s})",
                     why="min(p − stage, m)")
    finish = simulate(schedules)
    assert finish is not None, f"the {p}-stage pipeline deadlocks with these schedules: {schedules}"
    assert_exact(finish, (m + p - 1) * (T_F + T_B), f"p={p}, m={m}: the pipeline's finish time",
                 why=f"(m + p − 1)·(t_F + t_B) with t_F = {T_F}, t_B = {T_B}")


@grade(one_f_one_b_schedule, "correctness", points=1,
       hint="Raise ValueError naming the argument: which stages exist in a p-stage pipeline?", validation=True)
@pytest.mark.parametrize(
    "args, name", [((4, 8, 4), "stage"), ((4, 8, -1), "stage"), ((4, 0, 0), "m"), ((0, 8, 0), "p")]
)
def test_schedule_rejects_bad_arguments(args, name):
    assert_rejects(one_f_one_b_schedule, args, name)


# ---- megatron_groups ---------------------------------------------------------------------------


def named_groups(got: object, rank: int, call: str) -> dict[str, tuple[int, ...]]:
    assert isinstance(got, dict) and rank in got, f"{call}: expected a dict keyed by every rank, missing rank {rank}"
    entry = got[rank]
    assert isinstance(entry, dict) and {"tp", "pp", "dp"} <= set(entry), (
        f"{call}[{rank}] needs keys 'tp', 'pp', 'dp': {entry!r}"
    )
    return {k: tuple(entry[k]) for k in ("tp", "pp", "dp")}


@grade(megatron_groups, "correctness", points=3,
       hint="rank = pp_rank·tp·dp + dp_rank·tp + tp_rank: which coordinate varies fastest?")
def test_groups_worked_example():
    """TP=8, DP=2, PP=4 (64 ranks): TP groups are 8 consecutive ranks, DP stride 8, PP stride 16."""
    got = megatron_groups(64, 8, 4)
    g = named_groups(got, 13, "megatron_groups(64, 8, 4)")
    want = {"tp": tuple(range(8, 16)), "dp": (5, 13), "pp": (13, 29, 45, 61)}
    for kind, ranks in want.items():
        assert g[kind] == ranks, f"megatron_groups(64, 8, 4)[13][{kind!r}] = {g[kind]}, expected {ranks}"
    assert named_groups(got, 0, "megatron_groups(64, 8, 4)") == {
        "tp": tuple(range(8)),
        "dp": (0, 8),
        "pp": (0, 16, 32, 48),
    }
    assert len(got) == 64, f"megatron_groups(64, 8, 4) has {len(got)} ranks, expected 64"


@grade(megatron_groups, "correctness", points=3,
       hint="Decompose each rank with divmod, TP innermost, then DP, then PP.")
@given(tp=st.integers(1, 8), pp=st.integers(1, 6), dp=st.integers(1, 6))
def test_groups_closed_form(tp, pp, dp):
    """Every rank's groups follow Megatron's order, and each kind of group partitions the world."""
    world, call = tp * pp * dp, f"megatron_groups({tp * pp * dp}, {tp}, {pp})"
    got = megatron_groups(world, tp, pp)
    assert sorted(got) == list(range(world)), f"{call}: keys should be ranks 0..{world - 1}, got {sorted(got)[:10]}..."
    for rank in range(world):
        q, t = divmod(rank, tp * dp)
        d, r = divmod(t, tp)
        want = {
            "tp": tuple(q * tp * dp + d * tp + i for i in range(tp)),
            "dp": tuple(q * tp * dp + j * tp + r for j in range(dp)),
            "pp": tuple(k * tp * dp + d * tp + r for k in range(pp)),
        }
        assert named_groups(got, rank, call) == want, f"{call}[{rank}] = {got[rank]}, expected {want}"


@grade(megatron_groups, "correctness", points=1,
       hint="Raise ValueError naming the argument: can 60 ranks hold tp=8 × pp=4?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((60, 8, 4), "world_size"),
        ((64, 0, 4), "tp"),
        ((64, 8, 0), "pp"),
        ((0, 1, 1), "world_size"),
        ((64.0, 8, 4), "world_size"),
    ],
)
def test_groups_reject_bad_arguments(args, name):
    assert_rejects(megatron_groups, args, name)


# ---- tp_allreduce_bytes_per_layer --------------------------------------------------------------


@grade(tp_allreduce_bytes_per_layer, "correctness", points=3,
       hint="How many all-reduces per layer forward, how many backward; and is the 2-byte factor already in M?")
def test_tp_traffic_worked_numbers():
    """70B, b=2, s=4096, h=8192, TP=8: 939,524,096 B per layer and step; ×80 layers.

    The course's 2.15 GB per layer counts the 2-byte element size twice (erratum #5).
    """
    m = MODELS["llama-3-70b"]
    got = tp_allreduce_bytes_per_layer(2, 4096, m.hidden, 8)
    assert_exact(got, 939_524_096, "tp_allreduce_bytes_per_layer(2, 4096, 8192, 8)", why="4 × 234,881,024", unit="B")
    assert_exact(got * m.n_layers, 75_161_927_680, f"{m.n_layers} layers × tp_allreduce_bytes_per_layer", unit="B")
    assert_exact(tp_allreduce_bytes_per_layer(2, 4096, m.hidden, 1), 0,
                 "tp_allreduce_bytes_per_layer(2, 4096, 8192, 1)", why="TP=1 all-reduces nothing", unit="B")


@grade(tp_allreduce_bytes_per_layer, "correctness", points=2,
       hint="A ring all-reduce sends 2·(N−1) chunks of ceil(M/N) bytes from every GPU.")
@given(
    b=st.integers(0, 64),
    s=st.integers(0, 2**17),
    h=st.integers(0, 2**15),
    tp=st.integers(1, 64),
    e=st.sampled_from([1, 2, 4]),
)
def test_tp_traffic_closed_form(b, s, h, tp, e):
    want = 4 * 2 * (tp - 1) * -(-(b * s * h * e) // tp)
    got = tp_allreduce_bytes_per_layer(b, s, h, tp, e)
    assert_exact(got, want, f"tp_allreduce_bytes_per_layer({b}, {s}, {h}, {tp}, {e})",
                 why="4 all-reduces × 2·(tp − 1)·ceil(b·s·h·e / tp)", unit="B")


@grade(tp_allreduce_bytes_per_layer, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((2, 4096, 8192, 0), "tp"),
        ((-2, 4096, 8192, 8), "batch"),
        ((2, 4096, 8192.0, 8), "hidden"),
        ((2, 4096, 8192, 8, 2.0), "elem_bytes"),
    ],
)
def test_tp_traffic_rejects_bad_arguments(args, name):
    assert_rejects(tp_allreduce_bytes_per_layer, args, name)
