"""L12 · The roofline: ridge point, attainable FLOP/s, GEMM arithmetic intensity, shared-memory bank conflicts."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GPUS, TB
from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l12_roofline"
ridge_point = learner(UNIT, "roofline", "ridge_point")
attainable_flops = learner(UNIT, "roofline", "attainable_flops")
gemm_intensity = learner(UNIT, "roofline", "gemm_intensity")
bank_conflict_degree = learner(UNIT, "roofline", "bank_conflict_degree")

A100, H100, B200 = GPUS["A100-80G"], GPUS["H100-SXM"], GPUS["B200"]
peaks = st.floats(1e12, 1e16)
bandwidths = st.floats(1e11, 1e14)
dims = st.integers(1, 2**16)


# ---- ridge_point --------------------------------------------------------------------------------------


@grade(ridge_point, "correctness", points=2,
       hint="At the ridge, bandwidth × intensity equals the peak: solve for the intensity.")
def test_ridge_worked_examples():
    """H100 989 TFLOP/s / 3.35 TB/s = 295.2; A100 312 / 2.039 = 153.0 (course's 2.0 TB/s: 156); B200: 281.25."""
    assert_number(ridge_point(H100.bf16_flops, H100.hbm_bytes_per_s), 989 / 3.35, "ridge_point(H100)")
    assert_number(ridge_point(A100.bf16_flops, A100.hbm_bytes_per_s), 312 / 2.039, "ridge_point(A100 at 2.039 TB/s)")
    assert_number(ridge_point(A100.bf16_flops, 2.0 * TB), 156.0, "ridge_point(A100 at the course's 2.0 TB/s)")
    assert_number(ridge_point(B200.bf16_flops, B200.hbm_bytes_per_s), 281.25, "ridge_point(B200)")


@grade(ridge_point, "correctness", points=1, hint="FLOP/s divided by bytes/s leaves FLOP/B. Which goes on top?")
@given(peak=peaks, bw=bandwidths)
def test_ridge_units(peak, bw):
    """ridge × bandwidth = peak for any GPU; a faster memory lowers the ridge."""
    got = ridge_point(peak, bw)
    assert_number(got * bw, peak, f"ridge_point({peak!r}, {bw!r}) × mem_bw")
    assert ridge_point(peak, bw * 2) < got, "doubling the bandwidth should lower the ridge point"


@grade(ridge_point, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0.0, 3.35e12), "peak_flops"), ((989e12, 0.0), "mem_bw"),
                                        ((989e12, -1.0), "mem_bw"), ((math.inf, 3.35e12), "peak_flops")])
def test_ridge_rejects_bad_arguments(args, name):
    """Zero, negative or infinite peaks and bandwidths raise ValueError naming the argument."""
    assert_rejects(ridge_point, args, name)


# ---- attainable_flops --------------------------------------------------------------------------------


@grade(attainable_flops, "correctness", points=2,
       hint="Below the ridge you are paid per byte; above it the math units are the roof.")
def test_attainable_worked_examples():
    """H100: RMSNorm (0.5 FLOP/B) 1.675 TFLOP/s; decode GEMV (1.0) 3.35 TFLOP/s; GEMM 4096³ (1365.3) the 989 peak."""
    peak, bw = H100.bf16_flops, H100.hbm_bytes_per_s
    for intensity, want in [(0.5, 1.675e12), (1.0, 3.35e12), (4096 / 3, peak), (0.0, 0.0)]:
        assert_number(attainable_flops(intensity, peak, bw), want, f"attainable_flops({intensity}, H100)")


@grade(attainable_flops, "correctness", points=2,
       hint="Two roofs: the slanted one (bandwidth × intensity) and the flat one (peak). Which binds?")
@given(intensity=st.floats(0, 1e5), peak=peaks, bw=bandwidths)
def test_attainable_is_the_lower_roof(intensity, peak, bw):
    """min(peak, bw × I) for any inputs: never above the peak, never decreasing in I."""
    got = attainable_flops(intensity, peak, bw)
    assert_number(got, min(peak, bw * intensity), f"attainable_flops({intensity!r}, {peak!r}, {bw!r})")
    assert attainable_flops(intensity * 2, peak, bw) >= got, "a higher intensity can never attain less"


@grade(attainable_flops, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((-1.0, 989e12, 3.35e12), "intensity"), ((1.0, 0.0, 3.35e12), "peak_flops"),
                                        ((1.0, 989e12, 0.0), "mem_bw"), ((math.nan, 989e12, 3.35e12), "intensity")])
def test_attainable_rejects_bad_arguments(args, name):
    """Negative or NaN intensity, zero peak or bandwidth raise ValueError naming the argument."""
    assert_rejects(attainable_flops, args, name)


# ---- gemm_intensity ---------------------------------------------------------------------------------


@grade(gemm_intensity, "correctness", points=2,
       hint="FLOPs: one multiply and one add per term. Bytes: A, B and C once each, elem_bytes each element.")
def test_gemm_intensity_worked_examples():
    """4096³ fp16: 1365.33; 4096×4096×16384 fp16: 1820.44 (L02 Q2); GEMV 1×4096×4096 fp16: 0.9995; fp32 halves it."""
    assert_number(gemm_intensity(4096, 4096, 4096, 2), 137_438_953_472 / 100_663_296, "gemm_intensity(4096³, fp16)")
    assert_number(gemm_intensity(4096, 4096, 16384, 2), 549_755_813_888 / 301_989_888,
                  "gemm_intensity(4096, 4096, 16384, fp16)")
    assert_number(gemm_intensity(1, 4096, 4096, 2), 2 * 4096**2 / (2 * (2 * 4096 + 4096**2)), "GEMV intensity")
    assert_number(gemm_intensity(4096, 4096, 4096, 4), 4096 / 6, "gemm_intensity(4096³, fp32)")


@grade(gemm_intensity, "correctness", points=2,
       hint="Does your formula use each of m, k, n where it belongs (C is m×n)?")
@given(m=dims, k=dims, n=dims, elem=st.sampled_from([1, 2, 4, 8]))
def test_gemm_intensity_closed_form(m, k, n, elem):
    """2mkn / (elem_bytes·(mk + kn + mn)) for any shape; symmetric in m and n; wider elements, lower intensity."""
    got = gemm_intensity(m, k, n, elem)
    assert_number(got, 2 * m * k * n / (elem * (m * k + k * n + m * n)), f"gemm_intensity({m}, {k}, {n}, {elem})")
    assert_number(gemm_intensity(n, k, m, elem), got, f"gemm_intensity({n}, {k}, {m}, {elem}) (m and n swapped)")


@grade(gemm_intensity, "correctness", points=1,
       hint="Raise ValueError naming the argument; element sizes are int bytes.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 64, 64, 2), "m"), ((64, -1, 64, 2), "k"), ((64, 64, 0, 2), "n"),
                                        ((64, 64, 64, 0), "elem_bytes"), ((64, 64, 64, 2.0), "elem_bytes")])
def test_gemm_intensity_rejects_bad_arguments(args, name):
    """Zero or negative dimensions and zero or float element sizes raise ValueError naming the argument."""
    assert_rejects(gemm_intensity, args, name)


# ---- bank_conflict_degree --------------------------------------------------------------------------------


def simulated_degree(stride: int) -> int:
    """Play the warp: thread t reads word t·stride; the busiest bank serves that many distinct words."""
    words = {t * stride for t in range(32)}
    return max(Counter(w % 32 for w in words).values())


@grade(bank_conflict_degree, "correctness", points=2,
       hint="Thread t hits bank (t·stride) mod 32. How many threads share the busiest bank?")
def test_bank_worked_examples():
    """tile[32][32] column (stride 32): 32-way; padded tile[32][33]: conflict-free; stride 2: 2-way; 0: broadcast."""
    for stride, want in [(1, 1), (2, 2), (3, 1), (4, 4), (16, 16), (32, 32), (33, 1), (64, 32), (0, 1)]:
        assert_exact(bank_conflict_degree(stride), want, f"bank_conflict_degree({stride})")


@grade(bank_conflict_degree, "correctness", points=2,
       hint="Several threads reading the same word is a broadcast, not a conflict.")
@given(stride=st.integers(0, 10**6))
def test_bank_matches_a_simulated_warp(stride):
    """The busiest bank's count of distinct words, simulated over the 32 threads, for any stride."""
    assert_exact(bank_conflict_degree(stride), simulated_degree(stride), f"bank_conflict_degree({stride})",
                 why="the busiest bank's distinct words, simulated over 32 threads")


@grade(bank_conflict_degree, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("stride", [-1, 1.5, 2.0])
def test_bank_rejects_bad_arguments(stride):
    """Negative or non-int strides raise ValueError naming stride_words."""
    assert_rejects(bank_conflict_degree, (stride,), "stride_words")
