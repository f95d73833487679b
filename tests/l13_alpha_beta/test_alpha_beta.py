"""L13 · The α-β model: point-to-point time, crossover, fitting α and β, ring and hierarchical all-reduce."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, GPUS, NIC_400G_EFFECTIVE_BYTES_PER_S, GiB
from grader.kit import assert_number, assert_rejects, grade, learner

UNIT = "l13_alpha_beta"
transfer_time = learner(UNIT, "alpha_beta", "transfer_time")
crossover_bytes = learner(UNIT, "alpha_beta", "crossover_bytes")
fit_alpha_beta = learner(UNIT, "alpha_beta", "fit_alpha_beta")
ring_allreduce_time = learner(UNIT, "alpha_beta", "ring_allreduce_time")
hierarchical_allreduce_bytes = learner(UNIT, "alpha_beta", "hierarchical_allreduce_bytes")

IB = NIC_400G_EFFECTIVE_BYTES_PER_S  # 45 GB/s, the course's effective 400G NIC
NVLINK = GPUS["H100-SXM"].nvlink_bytes_per_s / 2  # 450 GB/s per direction
sizes = st.integers(0, 2**40)
alphas = st.floats(0, 1e-3)
betas = st.floats(1e8, 1e13)
PARTS = ("intra_reduce_scatter", "inter_allreduce", "intra_all_gather", "total")


# ---- transfer_time ------------------------------------------------------------------------------------


@grade(transfer_time, "correctness", points=2, hint="One start-up latency, then every byte at β bytes per second.")
def test_transfer_worked_examples():
    """14 GB at 45 GB/s: 0.311 s (L09); 1 KiB with α = 5 µs at 45 GB/s: 5.023 µs, latency-bound."""
    assert_number(transfer_time(14 * GB, 0.0, IB), 14 / 45, "transfer_time(14 GB, 0, 45 GB/s)")
    assert_number(transfer_time(1024, 5e-6, IB), 5e-6 + 1024 / IB, "transfer_time(1 KiB, 5 µs, 45 GB/s)")
    assert_number(transfer_time(0, 5e-6, IB), 5e-6, "transfer_time(0 B, 5 µs, 45 GB/s): the latency alone")


@grade(transfer_time, "correctness", points=2,
       hint="Is your time α + S/β for every size, latency and bandwidth, and does it grow with S?")
@given(s=sizes, alpha=alphas, beta=betas)
def test_transfer_closed_form_monotonic(s, alpha, beta):
    """α + S/β for any inputs; more bytes never take less time."""
    got = transfer_time(s, alpha, beta)
    assert_number(got, alpha + s / beta, f"transfer_time({s}, {alpha!r}, {beta!r})")
    assert transfer_time(s + 1, alpha, beta) >= got, "one more byte took less time"


@grade(transfer_time, "correctness", points=1,
       hint="Raise ValueError naming the argument; sizes are int bytes, not GB floats.", validation=True)
@pytest.mark.parametrize("args, name", [((-1, 5e-6, IB), "message_bytes"), ((14.0, 5e-6, IB), "message_bytes"),
                                        ((1024, -1e-6, IB), "alpha_s"), ((1024, 5e-6, 0), "beta_bytes_per_s")])
def test_transfer_rejects_bad_arguments(args, name):
    """Negative or float sizes, negative latency, zero bandwidth raise ValueError naming the argument."""
    assert_rejects(transfer_time, args, name)


# ---- crossover_bytes ----------------------------------------------------------------------------------


@grade(crossover_bytes, "correctness", points=2,
       hint="At the crossover the latency term equals the bandwidth term: α = S/β.")
def test_crossover_worked_example():
    """α = 5 µs, β = 45 GB/s: S* = 225 000 B; NVLink α = 0.8 µs, β = 450 GB/s: 360 000 B."""
    assert_number(crossover_bytes(5e-6, IB), 225_000, "crossover_bytes(5 µs, 45 GB/s)")
    assert_number(crossover_bytes(0.8e-6, NVLINK), 360_000, "crossover_bytes(0.8 µs, 450 GB/s)")


@grade(crossover_bytes, "correctness", points=1, hint="Check your answer: at S*, does S*/β equal α?")
@given(alpha=st.floats(1e-7, 1e-3), beta=betas)
def test_crossover_balances_the_terms(alpha, beta):
    """At S* the bandwidth term S*/β equals the latency α, for any α and β."""
    s = crossover_bytes(alpha, beta)
    assert_number(s / beta, alpha, f"crossover_bytes({alpha!r}, {beta!r}) / β")


@grade(crossover_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((-5e-6, IB), "alpha_s"), ((5e-6, 0.0), "beta_bytes_per_s"),
                                        ((5e-6, -IB), "beta_bytes_per_s")])
def test_crossover_rejects_bad_arguments(args, name):
    """Negative latency, zero or negative bandwidth raise ValueError naming the argument."""
    assert_rejects(crossover_bytes, args, name)


# ---- fit_alpha_beta ----------------------------------------------------------------------------------

SWEEP = [2**k for k in range(10, 31, 2)]  # 1 KiB … 1 GiB, as an nccl-tests sweep


@grade(fit_alpha_beta, "correctness", points=2,
       hint="The slope of time against size is seconds per byte: what is β then?")
def test_fit_recovers_a_planted_link():
    """Exact times of α = 5 µs, β = 45 GB/s over 1 KiB … 1 GiB give back (5e-6, 45e9)."""
    got = fit_alpha_beta(SWEEP, [5e-6 + s / IB for s in SWEEP])
    assert isinstance(got, list | tuple) and len(got) == 2, f"fit_alpha_beta(...) = {got!r}, expected (alpha_s, beta)"
    assert_number(got[0], 5e-6, "fitted alpha_s", rel=1e-6)
    assert_number(got[1], IB, "fitted beta_bytes_per_s", rel=1e-9)


@grade(fit_alpha_beta, "correctness", points=3, hint="Least squares uses every point, not the first and the last.")
@given(alpha=st.floats(1e-6, 5e-5), beta=st.floats(1e9, 1e12), seed=st.integers(0, 2**16),
       n=st.integers(3, 12))
def test_fit_is_least_squares_on_noisy_times(alpha, beta, seed, n):
    """Noisy measurements: the same line as an ordinary least-squares fit (numpy.polyfit, degree 1)."""
    rng = np.random.default_rng(seed)
    xs = sorted(int(x) for x in rng.integers(1, 2**26, n))
    if len(set(xs)) < 2:
        xs[-1] += 1
    ys = [alpha + x / beta + float(rng.normal(0, alpha / 10)) for x in xs]
    slope, intercept = np.polyfit(np.array(xs, dtype=np.float64), np.array(ys), 1)
    if slope <= 0:
        return
    got = fit_alpha_beta(xs, ys)
    what = f"fit_alpha_beta({xs}, …)"
    assert_number(got[0], intercept, f"{what} alpha_s", rel=1e-5)
    assert_number(got[1], 1 / slope, f"{what} beta_bytes_per_s", rel=1e-5)


@grade(fit_alpha_beta, "correctness", points=1, hint="A line needs two distinct sizes; the two lists must pair up.",
       validation=True)
@pytest.mark.parametrize("args, name", [(([1024, 2048], [1e-6]), "sizes"), (([1024, 1024], [1e-6, 2e-6]), "sizes"),
                                        (([1024.0, 2048.0], [1e-6, 2e-6]), "sizes"),
                                        (([1024, 2048], [2e-6, 1e-6]), "slope")])
def test_fit_rejects_bad_arguments(args, name):
    """Mismatched lengths, one distinct size, float sizes, or times falling with size raise ValueError."""
    assert_rejects(fit_alpha_beta, args, name)


# ---- ring_allreduce_time -------------------------------------------------------------------------------


@grade(ring_allreduce_time, "correctness", points=3, hint="2(N-1) steps: each pays α and moves S/N bytes per rank.")
def test_ring_time_course_examples():
    """TP = 8, S = 2·8192·4096·2 B, α = 0.8 µs, β = 450 GB/s: 0.533 ms (L13 §6.2); 140 GB, DP = 512, 45 GB/s: 6.21 s."""
    s = 2 * 8192 * 4096 * 2
    assert_number(ring_allreduce_time(s, 8, 0.8e-6, NVLINK), 14 * 0.8e-6 + 234_881_024 / NVLINK,
                  f"ring_allreduce_time({s}, 8, 0.8 µs, 450 GB/s)")
    assert_number(ring_allreduce_time(140 * GB, 512, 0.0, IB), 2 * 511 / 512 * 140 / 45,
                  "ring_allreduce_time(140 GB, 512, 0, 45 GB/s)")
    assert_number(ring_allreduce_time(s, 1, 0.8e-6, NVLINK), 0.0, f"ring_allreduce_time({s}, 1, 0.8 µs, 450 GB/s) "
                  "(one rank: nothing to send)")


@grade(ring_allreduce_time, "correctness", points=2,
       hint="As N grows the bandwidth term tends to 2S/β but the latency term keeps growing.")
@given(s=sizes, n=st.integers(1, 4096), alpha=alphas, beta=betas)
def test_ring_time_closed_form(s, n, alpha, beta):
    """2(N-1)·α + 2(N-1)/N·S/β for any inputs; more ranks never make it faster."""
    got = ring_allreduce_time(s, n, alpha, beta)
    assert_number(got, 2 * (n - 1) * alpha + 2 * (n - 1) / n * s / beta,
                  f"ring_allreduce_time({s}, {n}, {alpha!r}, {beta!r})")
    assert ring_allreduce_time(s, n + 1, alpha, beta) >= got * (1 - 1e-12), "one more rank made the ring faster"


@grade(ring_allreduce_time, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((-1, 8, 1e-6, IB), "message_bytes"), ((1.5 * GiB, 8, 1e-6, IB),
                         "message_bytes"), ((GiB, 0, 1e-6, IB), "n_ranks"), ((GiB, 8, 1e-6, -IB), "beta_bytes_per_s")])
def test_ring_time_rejects_bad_arguments(args, name):
    """Negative or float sizes, zero ranks, negative bandwidth raise ValueError naming the argument."""
    assert_rejects(ring_allreduce_time, args, name)


# ---- hierarchical_allreduce_bytes ------------------------------------------------------------------------


def hierarchical_oracle(s: int, n: int, g: int) -> dict[str, float]:
    rs = ag = (g - 1) / g * s
    inter = 2 * (n - 1) / n * s / g
    return {"intra_reduce_scatter": rs, "inter_allreduce": inter, "intra_all_gather": ag, "total": rs + inter + ag}


def check_hierarchical(s: int, n: int, g: int) -> None:
    got = hierarchical_allreduce_bytes(s, n, g)
    what = f"hierarchical_allreduce_bytes({s}, {n}, {g})"
    assert isinstance(got, dict) and set(PARTS) <= set(got), f"{what}: keys {sorted(got)}, expected {sorted(PARTS)}"
    for part, want in hierarchical_oracle(s, n, g).items():
        assert_number(got[part], want, f"{what}[{part!r}]")


@grade(hierarchical_allreduce_bytes, "correctness", points=3,
       hint="After the intra-node reduce-scatter, how big is the piece each GPU sends across nodes?")
def test_hierarchical_worked_example():
    """4 nodes × 8 GPUs, 1 GiB: 201 326 592 B per GPU over the NIC, vs 2 080 374 784 B for a flat 32-GPU ring."""
    check_hierarchical(GiB, 4, 8)
    inter = hierarchical_allreduce_bytes(GiB, 4, 8)["inter_allreduce"]
    assert_number(inter, 201_326_592, "inter_allreduce bytes per GPU")


@grade(hierarchical_allreduce_bytes, "correctness", points=2,
       hint="Check each phase: reduce-scatter and all-gather are one ring phase each, (g-1)/g · S.")
@given(s=sizes, n=st.integers(1, 512), g=st.integers(1, 16))
def test_hierarchical_parts(s, n, g):
    """Every part, for any size and layout; one GPU per node is a flat ring across nodes; one node sends nothing out."""
    check_hierarchical(s, n, g)
    if n == 1:
        assert_number(hierarchical_allreduce_bytes(s, 1, g)["inter_allreduce"], 0.0,
                      f"hierarchical_allreduce_bytes({s}, 1, {g})['inter_allreduce'] (one node: nothing crosses "
                      "the NIC)")


@grade(hierarchical_allreduce_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize("args, name", [((-1, 4, 8), "message_bytes"), ((1.0 * GiB, 4, 8), "message_bytes"),
                                        ((GiB, 0, 8), "n_nodes"), ((GiB, 4, 0), "gpus_per_node")])
def test_hierarchical_rejects_bad_arguments(args, name):
    """Negative or float sizes, zero nodes or GPUs raise ValueError naming the argument."""
    assert_rejects(hierarchical_allreduce_bytes, args, name)
