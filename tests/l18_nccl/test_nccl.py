"""L18 · NCCL ledgers: ring all-reduce traffic, nccl-tests bus bandwidth, ring vs tree, protocol choice."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, GPUS, GiB
from grader.kit import assert_number, assert_rejects, grade, learner

UNIT = "l18_nccl"
MiB = 2**20
ring_allreduce_bytes_per_rank = learner(UNIT, "nccl", "ring_allreduce_bytes_per_rank")
bus_bandwidth = learner(UNIT, "nccl", "bus_bandwidth")
allreduce_algorithm_times = learner(UNIT, "nccl", "allreduce_algorithm_times")
best_protocol = learner(UNIT, "nccl", "best_protocol")

NVLINK_PER_DIRECTION = GPUS["H100-SXM"].nvlink_bytes_per_s / 2  # 450 GB/s
# nccl-tests doc/PERFORMANCE.md (all_to_all from alltoall.cu): busbw = algbw × factor(P)
BUSBW_FACTOR = {
    "all_reduce": lambda p: 2 * (p - 1) / p,
    "all_gather": lambda p: (p - 1) / p,
    "reduce_scatter": lambda p: (p - 1) / p,
    "all_to_all": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
    "reduce": lambda p: 1.0,
}
sizes = st.integers(0, 2**40)
ranks = st.integers(1, 4096)


# ---- ring_allreduce_bytes_per_rank -------------------------------------------------------------------


@grade(ring_allreduce_bytes_per_rank, "correctness", points=2,
       hint="A ring all-reduce is two phases. How many chunks of M/P does each rank send in each?")
def test_ring_bytes_worked_examples():
    """140 GB of 70B bf16 grads over 512 ranks: 279.453125 GB per rank (L13 §6.1); 1 GiB over 8: 1.75 GiB."""
    assert_number(ring_allreduce_bytes_per_rank(140 * GB, 512), 279_453_125_000,
                  "ring_allreduce_bytes_per_rank(140 GB, 512)")
    assert_number(ring_allreduce_bytes_per_rank(GiB, 8), 1.75 * GiB, "ring_allreduce_bytes_per_rank(1 GiB, 8)")
    assert_number(ring_allreduce_bytes_per_rank(GiB, 1), 0.0, "ring_allreduce_bytes_per_rank(1 GiB, 1): one rank")


@grade(ring_allreduce_bytes_per_rank, "correctness", points=2,
       hint="Per rank 2(P-1)/P·M: what does it tend to as P grows, and can it ever reach 2M?")
@given(m=sizes, p=ranks)
def test_ring_bytes_closed_form_and_limit(m, p):
    """2(P-1)/P·M for any size and P; grows with P, stays below 2M, within 2M/P of it."""
    got = ring_allreduce_bytes_per_rank(m, p)
    assert_number(got, 2 * (p - 1) * m / p, f"ring_allreduce_bytes_per_rank({m}, {p})")
    assert got <= ring_allreduce_bytes_per_rank(m, p + 1) * (1 + 1e-12), "more ranks must not send fewer bytes"
    assert 2 * m - got <= 2 * m / p + 1e-9 * m, f"P = {p}: 2M - bytes = {2 * m - got!r}, should be 2M/P"


@grade(ring_allreduce_bytes_per_rank, "correctness", points=1,
       hint="Raise ValueError naming the argument; a byte count is an int, never 1.5 (GiB).", validation=True)
@pytest.mark.parametrize("args, name", [((-1, 8), "message_bytes"), ((1.5 * GiB, 8), "message_bytes"),
                                        ((1.5, 8), "message_bytes"), ((GiB, 0), "n_ranks"), ((GiB, 2.0), "n_ranks")])
def test_ring_bytes_rejects_bad_arguments(args, name):
    """Negative or float byte counts (a GiB value) and zero or float ranks raise ValueError naming the argument."""
    assert_rejects(ring_allreduce_bytes_per_rank, args, name)


# ---- bus_bandwidth ------------------------------------------------------------------------------------


@grade(bus_bandwidth, "correctness", points=2,
       hint="busbw = algbw × factor: for all_reduce the factor is the ring's bytes per rank over M.")
def test_busbw_course_log_row():
    """8×H100 all_reduce of 536 870 912 B in 1412.1 µs: algbw 380.19 GB/s → busbw 665.33 GB/s (74 % of 900)."""
    alg_bw = 536_870_912 / 1412.1e-6
    got = bus_bandwidth(alg_bw, 8, "all_reduce")
    assert_number(got, alg_bw * 1.75, f"bus_bandwidth({alg_bw:.6g}, 8, 'all_reduce')")
    assert_number(got / GB, 665.33, "busbw in GB/s (the log rounds the time to 0.1 µs)", rel=1e-4)


@grade(bus_bandwidth, "correctness", points=3,
       hint="Which collectives move each byte once per rank, which twice, and which are not rings at all?")
@pytest.mark.parametrize("collective", sorted(BUSBW_FACTOR))
@given(alg_bw=st.floats(0, 2e12), p=ranks)
def test_busbw_factor_per_collective(collective, alg_bw, p):
    """Each collective's nccl-tests factor, for any P and algbw."""
    want = alg_bw * BUSBW_FACTOR[collective](p)
    assert_number(bus_bandwidth(alg_bw, p, collective), want, f"bus_bandwidth({alg_bw!r}, {p}, {collective!r})")


@grade(bus_bandwidth, "correctness", points=1, hint="As P grows, the all_reduce factor approaches a limit: which one?")
def test_busbw_allreduce_factor_tends_to_two():
    """all_reduce: factor 0 at P = 1, 1 at P = 2, rising toward (never reaching) 2; all_gather's is half of it."""
    factors = [bus_bandwidth(1.0, p, "all_reduce") for p in (1, 2, 4, 8, 64, 1024, 10**6)]
    assert factors[:2] == [0.0, 1.0], f"all_reduce factors at P = 1, 2: {factors[:2]}, expected [0.0, 1.0]"
    assert all(a < b < 2 for a, b in zip(factors, factors[1:], strict=False)), f"not rising toward 2: {factors}"
    assert 2 - factors[-1] < 1e-5, f"P = 10⁶: factor {factors[-1]}, expected within 2e-6 of 2"
    assert_number(bus_bandwidth(1.0, 8, "all_gather") * 2, factors[3], "2 × all_gather factor at P = 8")


@grade(bus_bandwidth, "correctness", points=1,
       hint="Raise ValueError naming the argument; only the six nccl-tests collectives are known.", validation=True)
@pytest.mark.parametrize("args, name", [((1e9, 8, "allreduce"), "collective"), ((1e9, 8, "send"), "collective"),
                                        ((1e9, 0, "all_reduce"), "n_ranks"), ((-1.0, 8, "broadcast"), "alg_bw")])
def test_busbw_rejects_bad_arguments(args, name):
    """Unknown collectives, zero ranks and negative bandwidths raise ValueError naming the argument."""
    assert_rejects(bus_bandwidth, args, name)


# ---- allreduce_algorithm_times ------------------------------------------------------------------------

ALPHA, BETA = 2e-6, 45 * GB  # lecture 18 lab


def check_times(s: int, p: int, ring_ms: float, tree_ms: float) -> None:
    got = allreduce_algorithm_times(s, p, ALPHA, BETA)
    what = f"allreduce_algorithm_times({s}, {p}, 2e-6, 45e9)"
    assert isinstance(got, dict) and {"ring", "tree"} <= set(got), f"{what} = {got!r}, expected keys ring and tree"
    assert_number(got["ring"] * 1e3, ring_ms, f"{what}['ring'] in ms", rel=1e-3)
    assert_number(got["tree"] * 1e3, tree_ms, f"{what}['tree'] in ms", rel=1e-3)


@grade(allreduce_algorithm_times, "correctness", points=3,
       hint="Ring: 2(P-1) latencies. Tree: 2·log2(P) latencies, but each byte at 85 % of β, up and down.")
def test_ring_vs_tree_course_lab():
    """64 MiB: P = 8 ring 2.638 vs tree 3.521 ms; P = 512: 5.021 vs 3.545 ms; 32 KiB, P = 8: 29.3 vs 13.7 µs."""
    check_times(64 * MiB, 8, 2.63779, 3.52096)
    check_times(64 * MiB, 512, 5.02079, 3.54496)
    check_times(32 * 1024, 8, 0.0292743, 0.0137134)


@grade(allreduce_algorithm_times, "correctness", points=2,
       hint="Write both formulas in full: latency steps × α plus bytes per rank / bandwidth.")
@given(s=sizes, p=st.integers(2, 4096), alpha=st.floats(0, 1e-4), beta=st.floats(1e9, 1e12))
def test_ring_vs_tree_closed_form(s, p, alpha, beta):
    """Both formulas for any size, P, α and β; one rank costs nothing."""
    got = allreduce_algorithm_times(s, p, alpha, beta)
    what = f"allreduce_algorithm_times({s}, {p}, {alpha!r}, {beta!r})"
    assert_number(got["ring"], 2 * (p - 1) * alpha + 2 * (p - 1) / p * s / beta, f"{what}['ring']")
    assert_number(got["tree"], 2 * math.log2(p) * alpha + 2 * s / (0.85 * beta), f"{what}['tree']")
    one = allreduce_algorithm_times(s, 1, alpha, beta)
    assert one["ring"] == 0 and one["tree"] == 0, f"one rank: {one!r}, expected both 0.0"


@grade(allreduce_algorithm_times, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize("args, name", [((-5, 8, ALPHA, BETA), "message_bytes"), ((64.0 * MiB, 8, ALPHA, BETA),
                         "message_bytes"), ((MiB, 0, ALPHA, BETA), "n_ranks"), ((MiB, 8, -1e-6, BETA), "alpha_s"),
                         ((MiB, 8, ALPHA, 0.0), "beta_bytes_per_s")])
def test_ring_vs_tree_rejects_bad_arguments(args, name):
    """Negative or float sizes, zero ranks, negative latency, zero bandwidth raise ValueError naming the argument."""
    assert_rejects(allreduce_algorithm_times, args, name)


# ---- best_protocol --------------------------------------------------------------------------------

# The lecture's model, re-derived here: latency, then bandwidth after the protocol's flag overhead.
MODEL = {"ll": (1e-6, NVLINK_PER_DIRECTION / 2), "ll128": (2e-6, NVLINK_PER_DIRECTION * 120 / 128),
         "simple": (6e-6, NVLINK_PER_DIRECTION)}


def model_best(s: int) -> str:
    times = {k: lat + s / bw for k, (lat, bw) in MODEL.items()}
    return min(("ll", "ll128", "simple"), key=times.__getitem__)


@grade(best_protocol, "correctness", points=2,
       hint="LL halves the bandwidth, LL128 keeps 120/128 of it, Simple all of it: at what latency each?")
def test_protocol_by_size():
    """4 KiB → ll; 4 MiB → ll128; 256 MiB → simple; 0 B → ll (latency only)."""
    for s, want in [(4096, "ll"), (4 * MiB, "ll128"), (256 * MiB, "simple"), (0, "ll")]:
        got = best_protocol(s)
        assert got == want, f"best_protocol({s}) = {got!r}, expected {want!r}"


@grade(best_protocol, "correctness", points=2,
       hint="Each protocol costs latency + bytes / effective bandwidth: take the smallest.")
@given(s=st.integers(0, 2**31))
def test_protocol_matches_model(s):
    """The argmin of the three modelled times, for any size (crossovers near 482 kB and 27 MB)."""
    assert best_protocol(s) == model_best(s), f"best_protocol({s}) = {best_protocol(s)!r}, expected {model_best(s)!r}"


@grade(best_protocol, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((-1,), "message_bytes"), ((0.5 * MiB,), "message_bytes")])
def test_protocol_rejects_bad_arguments(args, name):
    """Negative or float sizes raise ValueError naming the argument."""
    assert_rejects(best_protocol, args, name)
