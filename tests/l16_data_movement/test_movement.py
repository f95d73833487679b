"""L16 · the mbarrier's phases and byte counts, overlap's k factor, activation offload vs recompute."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "l16_data_movement"
mbarrier_run = learner(UNIT, "movement", "mbarrier_run")
overlap_time = learner(UNIT, "movement", "overlap_time")
offload_or_recompute = learner(UNIT, "movement", "offload_or_recompute")

KiB, GiB = 2**10, 2**30
H100_BF16_DENSE = 989e12  # FLOP/s, NVIDIA H100 SXM datasheet (dense)


# ---- mbarrier_run: a reference model, independent of the solution --------------------------------------


class RefBarrier:
    """PTX's mbarrier for one CTA: an expected-arrival count, a pending count, a tx-count, a phase number."""

    def __init__(self, expected: int) -> None:
        self.expected, self.pending, self.tx, self.completed = expected, expected, 0, 0

    def _maybe_complete(self) -> None:
        if (self.pending, self.tx) == (0, 0):
            self.completed += 1
            self.pending = self.expected

    def step(self, event: tuple) -> object:
        kind = event[0]
        if kind == "try_wait":
            return self.completed % 2 != event[1]
        if kind == "expect_tx" or kind == "arrive_expect_tx":
            self.tx = self.tx + event[1]
        if kind == "complete_tx":
            self.tx = self.tx - event[1]
        if kind in {"arrive", "arrive_expect_tx"}:
            assert self.pending > 0, "the generator never arrives at a barrier with no arrival pending"
            self.pending = self.pending - 1
        self._maybe_complete()
        return (self.completed, self.pending, self.tx)


def reference_run(count: int, events: list[tuple]) -> list:
    barrier = RefBarrier(count)
    return [barrier.step(e) for e in events]


def check_run(count: int, events: list[tuple], want: list) -> None:
    call = f"mbarrier_run({count}, {events})"
    got = mbarrier_run(count, events)
    assert isinstance(got, list | tuple), (
        f"{call} returned {type(got).__name__}, expected a list (one entry per event)")
    assert len(got) == len(events), f"{call} returned {len(got)} entries for {len(events)} events"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, bool):
            ok = isinstance(g, bool) and g == w
            what = "a bool (has the phase of that parity completed?)"
        else:
            ok = isinstance(g, tuple) and len(g) == 3 and all(type(v) is int for v in g) and g == w
            what = "the state (phase, pending, tx) as a tuple of ints"
        assert ok, f"{call}[{i}] for {events[i]!r} = {g!r}, expected {w!r}: {what}; whole result {got!r}"


@grade(mbarrier_run, "correctness", points=3,
       hint="A phase needs two things to finish: which counters must both be zero, and what do waiters compare?")
def test_mbarrier_worked_examples():
    """A 64 KiB TMA load in two halves; bytes before the expectation; count 3; parity aliasing two phases on."""
    check_run(1, [("arrive_expect_tx", 64 * KiB), ("try_wait", 0), ("complete_tx", 32 * KiB),
                  ("complete_tx", 32 * KiB), ("try_wait", 0), ("try_wait", 1)],
              [(0, 0, 65536), False, (0, 0, 32768), (1, 1, 0), True, False])
    check_run(1, [("complete_tx", 4096), ("arrive_expect_tx", 4096)], [(0, 1, -4096), (1, 1, 0)])
    check_run(3, [("arrive",), ("arrive_expect_tx", 1024), ("complete_tx", 1024), ("arrive",), ("try_wait", 0)],
              [(0, 2, 0), (0, 1, 1024), (0, 1, 0), (1, 3, 0), True])
    check_run(1, [("arrive_expect_tx", 8192), ("complete_tx", 8192), ("arrive_expect_tx", 8192),
                  ("complete_tx", 8192), ("try_wait", 0), ("try_wait", 1)],
              [(0, 0, 8192), (1, 1, 0), (1, 0, 8192), (2, 1, 0), False, True])


@grade(mbarrier_run, "correctness", points=1,
       hint="The course's §6.2 hang: 1024 bytes expected, 512 delivered. What does a waiter see, forever?")
def test_mbarrier_short_delivery_and_separate_expect():
    """512 of 1024 expected bytes never complete the phase; expect_tx alone does not arrive; 0 events give []."""
    check_run(1, [("arrive_expect_tx", 1024), ("complete_tx", 512), ("try_wait", 0)],
              [(0, 0, 1024), (0, 0, 512), False])
    check_run(2, [("expect_tx", 256), ("arrive",), ("complete_tx", 256), ("try_wait", 0), ("arrive",),
                  ("try_wait", 0), ("try_wait", 1)],
              [(0, 2, 256), (0, 1, 256), (0, 1, 0), False, (1, 2, 0), True, False])
    # three phases done: the current one (phase 3) has parity 1 and is still open
    check_run(1, [("arrive",), ("arrive",), ("arrive",), ("try_wait", 0), ("try_wait", 1)],
              [(1, 1, 0), (2, 1, 0), (3, 1, 0), True, False])
    check_run(4, [], [])


BYTES = st.one_of(st.sampled_from([0, 1, 128, 1024, 4096, 65536]), st.integers(0, 5000))


@st.composite
def barrier_streams(draw) -> tuple[int, list[tuple]]:
    """Any well-formed stream: arrivals only while one is pending; completions that often zero the tx-count."""
    count = draw(st.integers(1, 4))
    ref, events = RefBarrier(count), []
    for _ in range(draw(st.integers(0, 30))):
        kinds = ["expect_tx", "complete_tx", "try_wait"] + (["arrive", "arrive_expect_tx"] * 2 if ref.pending else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "arrive":
            event = ("arrive",)
        elif kind == "try_wait":
            event = ("try_wait", draw(st.integers(0, 1)))
        elif kind == "complete_tx":
            event = ("complete_tx", draw(st.one_of(st.just(max(ref.tx, 0)), BYTES)))
        else:
            event = (kind, draw(BYTES))
        ref.step(event)
        events.append(event)
    return count, events


@grade(mbarrier_run, "correctness", points=3,
       hint="After every event but a wait, ask: are the pending arrivals AND the pending bytes both zero now?")
@settings(max_examples=60)
@given(stream=barrier_streams())
def test_mbarrier_matches_reference_model(stream):
    """Random well-formed streams (any count, bytes before or after their expectation) against a reference."""
    count, events = stream
    check_run(count, events, reference_run(count, events))


@st.composite
def producer_stages(draw) -> tuple[int, list[list[tuple]]]:
    """A producer's stages: count − 1 plain arrivals, one arrive_expect_tx(b), b bytes landing in chunks (≥ 1 B),
    in any order within the stage (bytes may land before their expectation)."""
    count = draw(st.integers(1, 3))
    stages = []
    for _ in range(draw(st.integers(1, 5))):
        chunks = draw(st.lists(st.integers(1, 8192), min_size=1, max_size=4))
        stage = [("arrive",)] * (count - 1) + [("arrive_expect_tx", sum(chunks))]
        stage += [("complete_tx", c) for c in chunks]
        stages.append(draw(st.permutations(stage)))
    return count, stages


@grade(mbarrier_run, "correctness", points=2,
       hint="Arrivals can all be in while bytes are still in flight: may a waiter on that phase wake up yet?")
@settings(max_examples=40)
@given(work=producer_stages())
def test_mbarrier_producer_stages(work):
    """Each stage completes exactly at its last event, in any order; a waiter on a stage is False until then."""
    count, stages = work
    events, probes = [], []  # probes: (index in events, stage, completed expected)
    for s, stage in enumerate(stages):
        for j, event in enumerate(stage):
            if j == len(stage) - 1:
                probes.append((len(events), s, False))
                events.append(("try_wait", s & 1))
            events.append(event)
        probes.append((len(events), s, True))
        events.append(("try_wait", s & 1))
    call = f"mbarrier_run({count}, {events})"
    got = mbarrier_run(count, events)
    assert isinstance(got, list | tuple) and len(got) == len(events), f"{call} returned {got!r}: one entry per event"
    for index, s, done in probes:
        assert got[index] is done, (
            f"{call}[{index}] (try_wait({s & 1}) for stage {s}) = {got[index]!r}, expected {done}: "
            + ("the stage's last event has not happened yet (arrivals and bytes must both be complete)" if not done
               else "every arrival and every byte of the stage is in")
        )
    states = [g for g in got if isinstance(g, tuple)]
    assert states and states[-1] == (len(stages), count, 0), (
        f"{call}: final state {states[-1] if states else None!r}, expected ({len(stages)}, {count}, 0): "
        f"{len(stages)} stages completed"
    )


@grade(mbarrier_run, "correctness", points=1, validation=True,
       hint="Which argument is wrong: the count, or the i-th event? Name `events[i]` in the message.")
def test_mbarrier_rejects_bad_arguments():
    """count < 1 or not an int; malformed events, negative or float bytes, parity 2, an arrive with none pending."""
    assert_rejects_all(mbarrier_run, [
        ((0, [("arrive",)]), "count"),
        ((1.0, [("arrive",)]), "count"),
        ((True, [("arrive",)]), "count"),
        ((1, [("arrive", 1)]), "events[0]"),
        ((1, [("try_wait", 0), ("wait", 0)]), "events[1]"),
        ((1, ["arrive"]), "events[0]"),
        ((1, [()]), "events[0]"),
        ((1, [("complete_tx",)]), "events[0]"),
        ((1, [("arrive_expect_tx", 8), ("complete_tx", -1)]), "events[1]"),
        ((1, [("expect_tx", 4096.0)]), "events[0]"),
        ((1, [("expect_tx", True)]), "events[0]"),
        ((1, [("try_wait", 2)]), "events[0]"),
        ((1, [("try_wait", -1)]), "events[0]"),
        ((1, [("arrive_expect_tx", 8), ("arrive",)]), "events[1]"),
        ((2, [("arrive",), ("expect_tx", 4), ("arrive",), ("arrive",)]), "events[3]"),
    ])


# ---- overlap_time -------------------------------------------------------------------------------------


@grade(overlap_time, "correctness", points=2,
       hint="Overlapped work ends when the slower side ends. Which side does each k slow down?")
def test_overlap_worked_examples():
    """45 ms compute and 35 ms comm: 58.5 with k_comp 1.3 (serial 80), 49.5 with 1.1 / 1.4, 45 with no contention."""
    assert_number(overlap_time(45, 35, 1.3), 58.5, "overlap_time(45, 35, 1.3)")
    assert_number(overlap_time(45, 35, 1.1, 1.4), 49.5, "overlap_time(45, 35, 1.1, 1.4)")
    assert_number(overlap_time(45, 35), 45.0, "overlap_time(45, 35): k = 1 is the ideal overlap")
    assert_number(overlap_time(10, 35, k_comm=1.2), 42.0, "overlap_time(10, 35, k_comm=1.2)")
    assert_number(overlap_time(0.0, 0.0, 1.4, 1.4), 0.0, "overlap_time(0, 0, 1.4, 1.4)")


@grade(overlap_time, "correctness", points=1,
       hint="Can overlapping two jobs ever beat the slower one alone, or lose to both run back to back at k?")
@settings(max_examples=50)
@given(tc=st.floats(0, 1e4), tm=st.floats(0, 1e4), kc=st.floats(1, 2), km=st.floats(1, 2))
def test_overlap_bounds(tc, tm, kc, km):
    """max(k_comp·t_comp, k_comm·t_comm): at least max(t_comp, t_comm), at most max(k)·(t_comp + t_comm)."""
    got = overlap_time(tc, tm, kc, km)
    call = f"overlap_time({tc!r}, {tm!r}, {kc!r}, {km!r})"
    assert_number(got, max(kc * tc, km * tm), call)
    assert got >= max(tc, tm) * (1 - 1e-12), f"{call} = {got!r} is below the slower side alone"
    assert got <= max(kc, km) * (tc + tm) * (1 + 1e-12), f"{call} = {got!r} is above the serial time at k"


@grade(overlap_time, "correctness", points=1, validation=True,
       hint="A slowdown factor below 1 would be a speed-up from contention. Which checks does that call for?")
def test_overlap_rejects_bad_arguments():
    """Negative or non-finite times and k < 1 raise ValueError naming the argument."""
    assert_rejects_all(overlap_time, [
        ((-1, 35), "t_comp"), ((45, -0.5), "t_comm"), ((math.nan, 35), "t_comp"), ((45, math.inf), "t_comm"),
        ((45, 35, 0.9), "k_comp"), ((45, 35, 1.0, 0.5), "k_comm"), ((45, 35, math.nan), "k_comp"),
        (("45", 35), "t_comp"),
    ])


# ---- offload_or_recompute -----------------------------------------------------------------------------


def check_offload(args: tuple, offload: float, exposed: float, recompute: float, choice: str) -> None:
    call = f"offload_or_recompute{args}"
    got = offload_or_recompute(*args)
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict"
    for key, want in (("offload_s", offload), ("exposed_offload_s", exposed), ("recompute_s", recompute)):
        assert key in got, f"{call} has no key {key!r} (keys {sorted(got)})"
        assert_number(got[key], want, f"{call}[{key!r}]", abs_tol=1e-15)
    assert got.get("choice") == choice, f"{call}['choice'] = {got.get('choice')!r}, expected {choice!r}"


@grade(offload_or_recompute, "correctness", points=3,
       hint="The activation crosses PCIe twice. When is each crossing free, and is recomputing ever free?")
def test_offload_worked_examples():
    """4 GiB at 50 GB/s hides under 0.2 s (offload); at 12 GB/s 0.316 s is exposed (recompute); one 0.02 s overrun
    each way (0.04) loses to 0.03 s of recompute; a tie offloads."""
    check_offload((4 * GiB, 50e9, 20_000_000_000_000, H100_BF16_DENSE, 0.5, 0.2),
                  0.08589934592, 0.0, 0.04044489383215369, "offload")
    check_offload((4 * GiB, 12e9, 20_000_000_000_000, H100_BF16_DENSE, 0.5, 0.2),
                  0.35791394133333333, 0.31582788266666666, 0.04044489383215369, "recompute")
    check_offload((5_000_000_000, 50e9, 15_000_000_000_000, 1e15, 0.5, 0.08), 0.1, 0.04, 0.03, "recompute")
    check_offload((25_000_000_000, 50e9, 500_000_000_000_000, 1e15, 1.0, 0.25), 0.5, 0.5, 0.5, "offload")  # a tie
    check_offload((0, 50e9, 0, 1e15, 1.0, 0.0), 0.0, 0.0, 0.0, "offload")


@grade(offload_or_recompute, "correctness", points=2,
       hint="Does a faster link or a longer compute window ever make offloading look worse?")
@settings(max_examples=50)
@given(nbytes=st.integers(0, 2**36), bw=st.floats(1e9, 1e11), flops=st.integers(0, 10**14),
       peak=st.floats(1e13, 2e15), mfu=st.floats(0.05, 1.0), window=st.floats(0, 1.0),
       faster=st.floats(1.0, 8.0), longer=st.floats(0, 0.5))
def test_offload_formulas_and_monotone(nbytes, bw, flops, peak, mfu, window, faster, longer):
    """The formulas for any input; the choice never flips to recompute on a faster link or a longer window."""
    args = (nbytes, bw, flops, peak, mfu, window)
    offload = nbytes / bw
    exposed = 2 * max(0.0, offload - window)
    recompute = flops / (peak * mfu)
    got = offload_or_recompute(*args)
    call = f"offload_or_recompute{args}"
    for key, want in (("offload_s", offload), ("exposed_offload_s", exposed), ("recompute_s", recompute)):
        assert_number(got[key], want, f"{call}[{key!r}]", rel=1e-9, abs_tol=1e-12)
    if abs(exposed - recompute) > 1e-9 * max(exposed, recompute, 1e-12):
        want_choice = "offload" if exposed <= recompute else "recompute"
        assert got["choice"] == want_choice, f"{call}['choice'] = {got['choice']!r}, expected {want_choice!r}"
    if got["choice"] == "offload":
        faster_link = (nbytes, bw * faster, flops, peak, mfu, window)
        for better in (faster_link, (nbytes, bw, flops, peak, mfu, window + longer)):
            assert offload_or_recompute(*better)["choice"] == "offload", (
                f"{call} offloads but offload_or_recompute{better} (a faster link or a longer window) recomputes"
            )


@grade(offload_or_recompute, "correctness", points=1, validation=True,
       hint="Bytes and FLOPs are exact counts; a bandwidth, a peak or an MFU of 0 divides by zero.")
def test_offload_rejects_bad_arguments():
    """Float or negative counts, zero or non-finite rates, mfu outside (0, 1], a negative window."""
    ok = (4 * GiB, 50e9, 20_000_000_000_000, H100_BF16_DENSE, 0.5, 0.2)

    def bad(i: int, value: object) -> tuple:
        return ok[:i] + (value,) + ok[i + 1:]

    assert_rejects_all(offload_or_recompute, [
        (bad(0, 4.0 * GiB), "act_bytes"), (bad(0, -1), "act_bytes"), (bad(0, True), "act_bytes"),
        (bad(1, 0.0), "pcie_bytes_per_s"), (bad(1, -50e9), "pcie_bytes_per_s"), (bad(1, math.inf), "pcie_bytes_per_s"),
        (bad(2, 2e13), "recompute_flops"), (bad(2, -5), "recompute_flops"),
        (bad(3, 0), "peak_flops"), (bad(3, math.nan), "peak_flops"),
        (bad(4, 0.0), "mfu"), (bad(4, 1.5), "mfu"), (bad(4, -0.5), "mfu"),
        (bad(5, -0.1), "window_s"), (bad(5, math.nan), "window_s"),
    ])
