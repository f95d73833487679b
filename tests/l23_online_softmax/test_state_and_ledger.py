"""L23 · the online (m, d) state, its merge, and the softmax bytes ledger."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l23_online_softmax"
online_softmax_state = learner(UNIT, "softmax", "online_softmax_state")
merge_online_states = learner(UNIT, "softmax", "merge_online_states")
softmax_hbm_bytes = learner(UNIT, "softmax", "softmax_hbm_bytes")

NEG_INF = -math.inf
values = st.one_of(st.floats(-1e4, 1e4, allow_nan=False), st.just(NEG_INF))
streams = st.lists(values, max_size=40)


def as_list(x: object) -> object:
    """Lists and tuples alike, nested too: the contract names the items, not the sequence type."""
    return [as_list(v) for v in x] if isinstance(x, list | tuple) else x


def two_pass_state(xs: list[float]) -> tuple[float, float]:
    """The grader's own state: max first, then an exactly rounded sum (math.fsum)."""
    m = max(xs, default=NEG_INF)
    if m == NEG_INF:
        return NEG_INF, 0.0
    return m, math.fsum(math.exp(x - m) for x in xs)


def assert_state(got: object, want: tuple[float, float], what: str) -> None:
    assert isinstance(got, tuple) and len(got) == 2, f"{what}: expected a tuple (m, d), got {got!r}"
    m, d = got
    assert m == want[0], f"{what}: running max m = {m!r}, expected {want[0]!r}"
    assert_number(d, want[1], f"{what}: denominator d = Σ e^(x - m)", rel=1e-9)


# ---- online_softmax_state ---------------------------------------------------------------------


@grade(online_softmax_state, "correctness", points=2,
       hint="When a new maximum arrives, what happens to the terms already in d?")
def test_state_worked_example():
    """The lecture's trace: [2, 4, 1] → (2, 1) → (4, e⁻² + 1) → (4, 1.185122)."""
    for prefix, want in [([2.0], (2.0, 1.0)), ([2.0, 4.0], (4.0, math.exp(-2) + 1)),
                         ([2.0, 4.0, 1.0], (4.0, 1.1851223516044767))]:
        assert_state(online_softmax_state(iter(prefix)), want, f"online_softmax_state({prefix})")


@grade(online_softmax_state, "correctness", points=3,
       hint="The test feeds a one-shot iterator: does your code read xs more than once?")
@given(xs=streams)
@example(xs=[1e4, -1e4, 1e4])
@example(xs=[NEG_INF, 3.0, NEG_INF])
def test_state_matches_two_pass(xs):
    """One streaming pass gives the two-pass (m, Σ e^(x-m)), for any stream, read once."""
    assert_state(online_softmax_state(iter(xs)), two_pass_state(xs), f"online_softmax_state({xs})")


@grade(online_softmax_state, "correctness", points=1,
       hint="What state leaves any other state unchanged when merged with it?")
def test_state_empty_stream_is_identity():
    """Nothing seen yet: (-inf, 0.0), the identity of the merge."""
    got = online_softmax_state(iter([]))
    assert as_list(got) == [NEG_INF, 0.0], f"online_softmax_state([]) = {got!r}, expected (-inf, 0.0)"


# ---- merge_online_states ----------------------------------------------------------------------


@grade(merge_online_states, "correctness", points=3,
       hint="Both denominators were computed against their own max: rescale them to the common one.")
@given(xs=streams, cut=st.integers(0, 40))
def test_merge_equals_state_of_concatenation(xs, cut):
    """state(A) ⊕ state(B) = state(A + B) for every split of a stream."""
    a, b = xs[:cut], xs[cut:]
    got = merge_online_states(two_pass_state(a), two_pass_state(b))
    assert_state(got, two_pass_state(xs), f"merge(state({a}), state({b}))")


@grade(merge_online_states, "correctness", points=2, hint="What is e^(m_a - m) when both m_a and m are -inf?")
@given(xs=streams, ys=streams, zs=streams)
def test_merge_identity_commutative_associative(xs, ys, zs):
    """(-inf, 0) is the identity; a ⊕ b = b ⊕ a; (a ⊕ b) ⊕ c = a ⊕ (b ⊕ c)."""
    a, b, c = two_pass_state(xs), two_pass_state(ys), two_pass_state(zs)
    e = (NEG_INF, 0.0)
    assert_state(merge_online_states(e, e), e, "merge((-inf, 0), (-inf, 0))")
    assert_state(merge_online_states(a, e), a, f"merge({a}, identity)")
    assert_state(merge_online_states(e, a), a, f"merge(identity, {a})")
    assert_state(merge_online_states(a, b), merge_online_states(b, a), f"merge({a}, {b}) vs merge({b}, {a})")
    left = merge_online_states(merge_online_states(a, b), c)
    assert_state(merge_online_states(a, merge_online_states(b, c)), left, f"associativity on {a}, {b}, {c}")


@grade(merge_online_states, "correctness", points=1, hint="e^1000 overflows a double: never exponentiate a max itself.")
def test_merge_large_values_do_not_overflow():
    """(1000, 1) ⊕ (1001, 1) = (1001, 1 + e⁻¹); the course's overflow demo in state form."""
    assert_state(merge_online_states((1000.0, 1.0), (1001.0, 1.0)), (1001.0, 1 + math.exp(-1)),
                 "merge((1000, 1), (1001, 1))")
    assert_state(merge_online_states((1e4, 2.0), (-1e4, 5.0)), (1e4, 2.0), "merge((1e4, 2), (-1e4, 5))")


# ---- softmax_hbm_bytes -------------------------------------------------------------------------

READS = {"three_pass": 3, "online": 2, "fused": 1}


@grade(softmax_hbm_bytes, "correctness", points=2,
       hint="Count reads of x and writes of y, each n_rows·n_cols elements of elem_bytes bytes.")
def test_ledger_worked_numbers():
    """fp32, one row of N = 4096: 16N, 12N, 8N bytes; 8×1000 fp32 three-pass: 96 kB read + 32 kB written."""
    n = 4096
    for algorithm, per_elem in [("three_pass", 16), ("online", 12), ("fused", 8)]:
        assert_exact(softmax_hbm_bytes(1, n, 4, algorithm), per_elem * n,
                     f"softmax_hbm_bytes(1, {n}, 4, {algorithm!r})",
                     why=f"{per_elem}N: {READS[algorithm]} reads of x and one write of y, 4 B each", unit="B")
    assert_exact(softmax_hbm_bytes(8, 1000, 4, "three_pass"), 128_000, "softmax_hbm_bytes(8, 1000, 4, 'three_pass')",
                 why="96,000 B read, 32,000 B written", unit="B")


@grade(softmax_hbm_bytes, "correctness", points=2, hint="Is your answer an exact int in bytes, for every dtype size?")
@given(rows=st.integers(0, 10**6), cols=st.integers(0, 10**5), elem=st.sampled_from([1, 2, 4, 8]),
       algorithm=st.sampled_from(sorted(READS)))
def test_ledger_closed_form(rows, cols, elem, algorithm):
    """(reads + 1) · rows · cols · elem_bytes, an exact int, for any size."""
    assert_exact(softmax_hbm_bytes(rows, cols, elem, algorithm), (READS[algorithm] + 1) * rows * cols * elem,
                 f"softmax_hbm_bytes({rows}, {cols}, {elem}, {algorithm!r})",
                 why=f"{READS[algorithm]} reads of x and one write of y", unit="B")


@grade(softmax_hbm_bytes, "correctness", points=1, hint="Raise ValueError with the argument's name in the message.",
       validation=True)
@pytest.mark.parametrize(
    "args, name",
    [((-1, 10, 4, "fused"), "n_rows"), ((1, -5, 4, "fused"), "n_cols"), ((1, 10, 0, "fused"), "elem_bytes"),
     ((1, 10, 4, "two_pass"), "algorithm"), ((1, 10, 4.0, "fused"), "elem_bytes"),
     ((2.5, 10, 4, "online"), "n_rows")],
)
def test_ledger_rejects_bad_arguments(args, name):
    """Negative sizes, zero or float element sizes and unknown algorithms raise ValueError naming the argument."""
    assert_rejects(softmax_hbm_bytes, args, name)
