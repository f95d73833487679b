"""L24 · the block-tiling ledgers: tile arithmetic intensity and a tiled GEMM's global-memory bytes."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l24_gemm"
tile_intensity = learner(UNIT, "gemm", "tile_intensity")
tiled_gemm_hbm_bytes = learner(UNIT, "gemm", "tiled_gemm_hbm_bytes")

sizes = st.integers(1, 5000)
blocks = st.sampled_from([1, 8, 16, 32, 64, 96, 128, 256])
elem_bytes = st.sampled_from([1, 2, 4, 8])


def tile_by_tile_bytes(m: int, n: int, k: int, bm: int, bn: int, b: int) -> int:
    """The grader's own count: walk the grid of tiles, each loading its real rows of A and columns of B."""
    rows = [min(bm, m - i) for i in range(0, m, bm)]
    cols = [min(bn, n - j) for j in range(0, n, bn)]
    loads = sum(r * k + k * c for r in rows for c in cols)
    return b * (loads + m * n)


# ---- tile_intensity ------------------------------------------------------------------------------


@grade(tile_intensity, "correctness", points=2,
       hint="Per step of k: how many FLOPs does the tile do, and how many bytes of A and B does it load?")
def test_tile_intensity_worked_numbers():
    """§2.4: 128×128 fp32 → 32.0 FLOP/B; §3.4 (registers): 8×8 → 2.0; the naive 1×1 tile → 0.25; fp16 doubles it."""
    for args, want in [((128, 128, 4), 32.0), ((8, 8, 4), 2.0), ((1, 1, 4), 0.25), ((128, 128, 2), 64.0),
                       ((128, 64, 2), 128 * 64 * 2 / (2 * 192))]:
        got = tile_intensity(*args)
        assert isinstance(got, float), f"tile_intensity{args} = {got!r}: return a float, not {type(got).__name__}"
        assert_number(got, want, f"tile_intensity{args} in FLOP/B (2·BM·BN FLOPs per (BM + BN)·b bytes)", rel=1e-12)


@grade(tile_intensity, "correctness", points=2,
       hint="Does your formula use elem_bytes, and count a multiply-add as 2 FLOPs?")
@given(bm=blocks, bn=blocks, b=elem_bytes, bk=st.integers(1, 64))
def test_tile_intensity_is_flops_over_bytes_of_a_k_step(bm, bn, b, bk):
    """Equals 2·BM·BN·BK FLOPs over b·BK·(BM + BN) bytes for any BK: the ratio, not a table."""
    want = Fraction(2 * bm * bn * bk, b * bk * (bm + bn))
    got = tile_intensity(bm, bn, b)
    what = f"tile_intensity({bm}, {bn}, {b})"
    assert isinstance(got, float), f"{what} = {got!r}: return a float, not {type(got).__name__}"
    assert_number(got, float(want), f"{what} (a k-step of BK = {bk}: {want.numerator}/{want.denominator} FLOP/B)",
                  rel=1e-12)


@grade(tile_intensity, "correctness", points=1, hint="Raise ValueError with the argument's name in the message.",
       validation=True)
@pytest.mark.parametrize("args, name", [((0, 128, 4), "block_m"), ((128, -1, 4), "block_n"),
                                        ((128, 128, 0), "elem_bytes"), ((128.0, 128, 4), "block_m")])
def test_tile_intensity_rejects_bad_arguments(args, name):
    """Zero, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(tile_intensity, args, name)


# ---- tiled_gemm_hbm_bytes ---------------------------------------------------------------------------


@grade(tiled_gemm_hbm_bytes, "correctness", points=3,
       hint="How many tiles share one row-strip of A? Each of them loads it.")
def test_tiled_gemm_worked_numbers():
    """4096³ fp32: 128×128 tiles move 4,362,076,160 B (31.5 FLOP/B); one tile for all of C moves the lecture's
    201.3 MB (682.67 FLOP/B, §1.1-1.2); 1×1 tiles are the naive kernel (0.25 FLOP/B)."""
    n = 4096
    flops = 2 * n**3
    for bm, want, intensity in [(128, 4_362_076_160, 31.5), (n, 201_326_592, 682.67), (1, 4 * (2 * n**3 + n**2), 0.25)]:
        got = tiled_gemm_hbm_bytes(n, n, n, bm, bm, 4)
        assert_exact(got, want, f"tiled_gemm_hbm_bytes({n}, {n}, {n}, {bm}, {bm}, 4)", unit="B",
                     why=f"A read {n // bm}× and B read {n // bm}×, C written once")
        assert abs(flops / got - intensity) < 0.01, f"{flops} FLOPs / {got} B should be {intensity} FLOP/B"


@grade(tiled_gemm_hbm_bytes, "correctness", points=2,
       hint="A ragged last tile is still a tile: round the number of tiles up.")
def test_tiled_gemm_ragged_tiles():
    """m=100, n=70, k=33 in 32×64 tiles, fp16: A read ceil(70/64) = 2 times, B ceil(100/32) = 4 times → 45,680 B."""
    assert_exact(tiled_gemm_hbm_bytes(100, 70, 33, 32, 64, 2), 45_680, "tiled_gemm_hbm_bytes(100, 70, 33, 32, 64, 2)",
                 why="2·(100·33·2 + 33·70·4 + 100·70)", unit="B")


@grade(tiled_gemm_hbm_bytes, "correctness", points=3,
       hint="A is re-read once per column of tiles (n / block_n), B once per row of tiles (m / block_m).")
@given(m=sizes, n=sizes, k=sizes, bm=blocks, bn=blocks, b=elem_bytes)
@example(m=1, n=1, k=1, bm=128, bn=128, b=2)
@example(m=4097, n=100, k=7, bm=128, bn=32, b=4)
def test_tiled_gemm_equals_tile_by_tile_count(m, n, k, bm, bn, b):
    """Equals the grader's walk over the grid of tiles (real rows and columns only), an exact int."""
    assert_exact(tiled_gemm_hbm_bytes(m, n, k, bm, bn, b), tile_by_tile_bytes(m, n, k, bm, bn, b),
                 f"tiled_gemm_hbm_bytes({m}, {n}, {k}, {bm}, {bn}, {b})", unit="B",
                 why=f"A read ceil(n/block_n) = {-(-n // bn)}×, B read ceil(m/block_m) = {-(-m // bm)}×, C once")


@grade(tiled_gemm_hbm_bytes, "correctness", points=1, hint="Raise ValueError with the argument's name in the message.",
       validation=True)
@pytest.mark.parametrize("args, name", [((0, 8, 8, 4, 4, 2), "m"), ((8, 8, -8, 4, 4, 2), "k"),
                                        ((8, 8, 8, 0, 4, 2), "block_m"), ((8, 8, 8, 4, 4, 2.0), "elem_bytes")])
def test_tiled_gemm_rejects_bad_arguments(args, name):
    """Zero, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(tiled_gemm_hbm_bytes, args, name)
