"""L43 · Ascend's NZ fractal layout (offsets, conversion both ways), TransData's cost, the backend probe."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "l43_npu_dpu"
nz_offset = learner(UNIT, "npu", "nz_offset")
nd_to_nz = learner(UNIT, "npu", "nd_to_nz")
nz_to_nd = learner(UNIT, "npu", "nz_to_nd")
layout_conversion_cost = learner(UNIT, "npu", "layout_conversion_cost")
detect_backend = learner(UNIT, "npu", "detect_backend")
device_string = learner(UNIT, "npu", "device_string")

SQUARE_4 = [[4 * r + c for c in range(4)] for r in range(4)]
NZ_4 = [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]  # lecture §3, (h0, w0) = (2, 2)
RAGGED_5x3 = [[10 * r + c for c in range(3)] for r in range(5)]
NZ_5x3 = [0, 1, 10, 11, 20, 21, 30, 31, 40, 41, -1, -1, 2, -1, 12, -1, 22, -1, 32, -1, 42, -1, -1, -1]


def ceil_to(n: int, block: int) -> int:
    return -(-n // block) * block


def numpy_nz(matrix: list[list], h0: int, w0: int, pad_value: float) -> list:
    """An independent formulation: pad, split into (H1, h0, W1, w0), put the block-column axis first."""
    a = np.array(matrix, dtype=np.float64)
    h, w = a.shape
    hp, wp = ceil_to(h, h0), ceil_to(w, w0)
    padded = np.full((hp, wp), float(pad_value))
    padded[:h, :w] = a
    return padded.reshape(hp // h0, h0, wp // w0, w0).transpose(2, 0, 1, 3).ravel().tolist()


def random_matrix(h: int, w: int, seed: int, kind: type) -> list[list]:
    """An h × w list of lists of distinct-enough values from a seeded generator (ints or floats)."""
    values = np.random.default_rng(seed).integers(-1000, 1000, size=(h, w))
    return [[kind(v) for v in row] for row in values.tolist()]


def check_nz(got: object, want_flat: list, hp: int, wp: int, call: str) -> None:
    assert isinstance(got, tuple) and len(got) == 3, f"{call} returned {got!r}, expected (flat, H_padded, W_padded)"
    flat, gh, gw = got
    assert_exact(gh, hp, f"{call} H_padded", why="H rounded up to a multiple of h0")
    assert_exact(gw, wp, f"{call} W_padded", why="W rounded up to a multiple of w0")
    assert isinstance(flat, list), f"{call} flat is {type(flat).__name__}, expected a list"
    assert len(flat) == len(want_flat), f"{call}: len(flat) = {len(flat)}, expected {len(want_flat)} (H_p·W_p)"
    for k, (g, w) in enumerate(zip(flat, want_flat, strict=True)):
        assert g == w, f"{call}: flat[{k}] = {g!r}, expected {w!r}; flat = {flat!r}"


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40))
fractals = st.one_of(st.tuples(st.integers(1, 6), st.integers(1, 6)), st.just((16, 16)), st.just((16, 8)))


# ---- nz_offset ---------------------------------------------------------------------------------------


@grade(nz_offset, "correctness", points=2,
       hint="Blocks go down a block-column first: how many blocks does one block-column hold when h is padded?")
def test_nz_offset_worked_examples():
    """The lecture's 4 × 4 at (2, 2); (17, 20) of 32 × 48 is block (1, 1), the 4th block: 788; ragged h pads."""
    for r in range(4):
        for c in range(4):
            assert_exact(nz_offset(r, c, 4, 4, 2, 2), NZ_4.index(4 * r + c), f"nz_offset({r}, {c}, 4, 4, 2, 2)")
    assert_exact(nz_offset(17, 20, 32, 48), 788, "nz_offset(17, 20, 32, 48)", why="(1·2 + 1)·256 + 1·16 + 4")
    assert_exact(nz_offset(1, 2, 4, 4, 2, 2), 10, "nz_offset(1, 2, 4, 4, 2, 2)")
    # 17 rows pad to 32: a block-column holds 2 blocks, so column 16 starts at block 2
    assert_exact(nz_offset(0, 16, 17, 17), 512, "nz_offset(0, 16, 17, 17)", why="H1 = ⌈17/16⌉ = 2 blocks per column")
    assert_exact(nz_offset(16, 16, 17, 17), 768, "nz_offset(16, 16, 17, 17)", why="block (1, 1) is the 4th")
    assert_exact(nz_offset(2, 1, 5, 3, 2, 2), 5, "nz_offset(2, 1, 5, 3, 2, 2)", why="block (1, 0), row 0, col 1")
    assert_exact(nz_offset(4, 2, 5, 3, 2, 2), 20, "nz_offset(4, 2, 5, 3, 2, 2)", why="block (2, 1) is the 6th")


@grade(nz_offset, "correctness", points=2,
       hint="Over the padded grid, does every slot of the buffer get exactly one (r, c), one block per h0·w0 slice?")
@settings(max_examples=25)
@given(shape=st.tuples(st.integers(1, 10), st.integers(1, 10)),
       fractal=st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 4)), st.just((3, 5)), st.just((8, 8))))
def test_nz_offset_is_a_blockwise_bijection(shape, fractal):
    """On the padded grid the offsets cover range(H_p·W_p) once; slice k of h0·w0 slots is one block, row-major."""
    h, w = shape
    h0, w0 = fractal
    hp, wp = ceil_to(h, h0), ceil_to(w, w0)
    seen = {}
    for r in range(hp):
        for c in range(wp):
            off = nz_offset(r, c, hp, wp, h0, w0)
            call = f"nz_offset({r}, {c}, {hp}, {wp}, {h0}, {w0})"
            assert type(off) is int and 0 <= off < hp * wp, f"{call} = {off!r}, outside range({hp * wp})"
            assert off not in seen, f"{call} = {off}, the same slot as (r, c) = {seen[off]}"
            seen[off] = (r, c)
            block, inside = divmod(off, h0 * w0)
            assert (r % h0, c % w0) == divmod(inside, w0), f"{call} = {off}: slot {inside} of its block, not row-major"
            assert block == (c // w0) * (hp // h0) + r // h0, f"{call} = {off}: block {block}, blocks go column-first"
    for r in range(h):  # the logical size gives the same offsets as the padded one
        for c in range(w):
            want = nz_offset(r, c, hp, wp, h0, w0)
            assert_exact(nz_offset(r, c, h, w, h0, w0), want, f"nz_offset({r}, {c}, {h}, {w}, {h0}, {w0})",
                         why=f"h = {h} pads to {hp}: the same buffer as nz_offset(..., {hp}, {wp}, ...)")


@grade(nz_offset, "correctness", points=1, validation=True,
       hint="Is (r, c) inside the h × w matrix, and are all six arguments whole numbers?")
def test_nz_offset_rejects_bad_arguments():
    """r or c outside the matrix, float indices, zero sizes or fractals raise ValueError naming the argument."""
    assert_rejects_all(nz_offset, [
        ((4, 0, 4, 4, 2, 2), "r"), ((-1, 0, 4, 4), "r"), ((1.0, 0, 4, 4), "r"),
        ((0, 4, 4, 4, 2, 2), "c"), ((0, -1, 4, 4), "c"), ((0, 2.0, 4, 4), "c"),
        ((0, 0, 0, 4), "h"), ((0, 0, 4, 4.0), "w"), ((0, 0, 4, 4, 0, 2), "h0"), ((0, 0, 4, 4, 2, True), "w0"),
    ])


# ---- nd_to_nz -----------------------------------------------------------------------------------------


@grade(nd_to_nz, "correctness", points=2,
       hint="Which block comes second in the buffer: the one to the right of block (0, 0), or the one below it?")
def test_nd_to_nz_worked_examples():
    """The lecture's 4 × 4 at (2, 2); a 5 × 3 matrix pads to 6 × 4 with the pad value; 1 × 1 in a 16 × 16 fractal."""
    check_nz(nd_to_nz(SQUARE_4, 2, 2), NZ_4, 4, 4, "nd_to_nz(4×4 of 0..15, 2, 2)")
    check_nz(nd_to_nz(RAGGED_5x3, 2, 2, pad_value=-1), NZ_5x3, 6, 4, "nd_to_nz(5×3 of 10r+c, 2, 2, pad_value=-1)")
    check_nz(nd_to_nz([[7.5]]), [7.5] + [0.0] * 255, 16, 16, "nd_to_nz([[7.5]])")
    check_nz(nd_to_nz([[1, 2, 3]], 1, 1), [1, 2, 3], 1, 3, "nd_to_nz([[1, 2, 3]], 1, 1)")


@grade(nd_to_nz, "correctness", points=2,
       hint="Pad, cut into (H1, h0, W1, w0), then which axis must come first in memory?")
@settings(max_examples=40)
@given(shape=shapes, fractal=fractals, pad=st.sampled_from([0.0, -1.0, 9.5]), seed=st.integers(0, 2**32 - 1))
def test_nd_to_nz_matches_numpy_reshape(shape, fractal, pad, seed):
    """Against pad → reshape(H1, h0, W1, w0) → transpose(2, 0, 1, 3) → ravel, for random shapes and fractals."""
    h, w = shape
    h0, w0 = fractal
    matrix = random_matrix(h, w, seed, float)
    want = numpy_nz(matrix, h0, w0, pad)
    check_nz(nd_to_nz(matrix, h0, w0, pad), want, ceil_to(h, h0), ceil_to(w, w0),
             f"nd_to_nz({h}×{w} matrix, {h0}, {w0}, {pad})")


@grade(nd_to_nz, "correctness", points=1,
       hint="Conversion only moves entries: what must the buffer hold besides the matrix's own entries?")
@settings(max_examples=30)
@given(shape=shapes, fractal=fractals)
def test_nd_to_nz_is_a_permutation_plus_padding(shape, fractal):
    """The buffer holds each entry of M once plus H_p·W_p − H·W pad values; each entry sits at nz_offset."""
    h, w = shape
    h0, w0 = fractal
    matrix = [[(r, c) for c in range(w)] for r in range(h)]  # distinct, hashable entries
    flat, hp, wp = nd_to_nz(matrix, h0, w0, None)
    pad = hp * wp - h * w
    want = Counter({(r, c): 1 for r in range(h) for c in range(w)}) + (Counter({None: pad}) if pad else Counter())
    assert Counter(flat) == want, f"nd_to_nz({h}×{w}, {h0}, {w0}): not a permutation of the entries plus {pad} pads"
    for r in range(h):
        for c in range(w):
            off = ((c // w0) * (hp // h0) + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0
            assert flat[off] == (r, c), f"nd_to_nz({h}×{w}, {h0}, {w0}): flat[{off}] = {flat[off]!r}, expected {(r, c)}"


@grade(nd_to_nz, "correctness", points=1, validation=True,
       hint="An empty matrix, a short row or a fractal of 0: which argument should the message name?")
def test_nd_to_nz_rejects_bad_arguments():
    """Empty, ragged or non-sequence matrices and bad fractal sizes raise ValueError naming the argument."""
    assert_rejects_all(nd_to_nz, [
        (([],), "matrix"), (([[]],), "matrix"), ((None,), "matrix"), ((5,), "matrix"),
        (([[1, 2], [3]],), "matrix[1]"), (([[1, 2], [3, 4], [5, 6, 7]],), "matrix[2]"), (([[1, 2], 3],), "matrix[1]"),
        ((SQUARE_4, 0, 2), "h0"), ((SQUARE_4, 2, 2.0), "w0"), ((SQUARE_4, -2, 2), "h0"),
    ])


# ---- nz_to_nd -----------------------------------------------------------------------------------------


def as_rows(got: object) -> object:
    """The rows as lists: a matrix returned as tuples holds the same entries in the same places."""
    if isinstance(got, list | tuple) and all(isinstance(row, list | tuple) for row in got):
        return [list(row) for row in got]
    return got


@grade(nz_to_nd, "correctness", points=1,
       hint="The buffer holds the padded matrix. Which (r, c) do you read, and which do you leave out?")
def test_nz_to_nd_worked_examples():
    """Back from the lecture's 4 × 4 buffer and from the padded 5 × 3 one (padding dropped)."""
    got = as_rows(nz_to_nd(NZ_4, 4, 4, 2, 2))
    assert got == SQUARE_4, f"nz_to_nd({NZ_4}, 4, 4, 2, 2) = {got!r}, expected {SQUARE_4!r}"
    got = as_rows(nz_to_nd(NZ_5x3, 5, 3, 2, 2))
    assert got == RAGGED_5x3, f"nz_to_nd({NZ_5x3}, 5, 3, 2, 2) = {got!r}, expected {RAGGED_5x3!r} (5 rows of 3)"
    got = as_rows(nz_to_nd([7.5] + [0.0] * 255, 1, 1))
    assert got == [[7.5]], f"nz_to_nd(16·16 buffer, 1, 1) = {got!r}, expected [[7.5]]"


@grade(nz_to_nd, "correctness", points=2,
       hint="If nd_to_nz puts M[r][c] at one offset, where must nz_to_nd read it from?")
@settings(max_examples=40)
@given(shape=shapes, fractal=fractals, seed=st.integers(0, 2**32 - 1))
def test_nz_round_trip(shape, fractal, seed):
    """nz_to_nd(nd_to_nz(M)) == M for random shapes and fractals, and nd_to_nz(nz_to_nd(F)) == F for a buffer F."""
    h, w = shape
    h0, w0 = fractal
    matrix = random_matrix(h, w, seed, int)
    flat = numpy_nz(matrix, h0, w0, 0.0)  # the reference buffer, not the learner's
    back = as_rows(nz_to_nd(flat, h, w, h0, w0))
    assert back == matrix, f"nz_to_nd(numpy NZ buffer of a {h}×{w} matrix, {h}, {w}, {h0}, {w0}) != the matrix"
    flat2, _, _ = nd_to_nz(back, h0, w0)
    assert flat2 == flat, f"nd_to_nz(nz_to_nd(F)) != F for a {h}×{w} matrix in {h0}×{w0} fractals"


@grade(nz_to_nd, "correctness", points=1, validation=True,
       hint="A 5 × 3 matrix in 2 × 2 fractals: how many entries must its buffer hold?")
def test_nz_to_nd_rejects_bad_arguments():
    """A buffer of the wrong length (the unpadded size, one short), a non-sequence, bad sizes: ValueError."""
    assert_rejects_all(nz_to_nd, [
        ((NZ_5x3[:15], 5, 3, 2, 2), "flat"), ((NZ_5x3[:-1], 5, 3, 2, 2), "flat"), ((NZ_4 + [0], 4, 4, 2, 2), "flat"),
        ((None, 4, 4, 2, 2), "flat"), ((NZ_4, 0, 4, 2, 2), "h"), ((NZ_4, 4, 4.0, 2, 2), "w"),
        ((NZ_4, 4, 4, 0, 2), "h0"), ((NZ_4, 4, 4, 2, -1), "w0"),
    ])


# ---- layout_conversion_cost ---------------------------------------------------------------------------

COST_KEYS = ("nd_bytes", "nz_bytes", "bytes_per_conversion", "t_conversion_s", "t_total_s", "step_s",
             "waste_fraction")


def check_cost(args: tuple, kwargs: dict, nd: int, nz: int, t_one: float, t_total: float, step: float,
               waste: float) -> None:
    call = f"layout_conversion_cost{args}" + (f" {kwargs}" if kwargs else "")
    got = layout_conversion_cost(*args, **kwargs)
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {COST_KEYS}"
    missing = [k for k in COST_KEYS if k not in got]
    assert not missing, f"{call} has no key(s) {missing} (keys {sorted(got)})"
    assert_exact(got["nd_bytes"], nd, f"{call}['nd_bytes']", unit="B")
    assert_exact(got["nz_bytes"], nz, f"{call}['nz_bytes']", why="H and W padded to whole fractals", unit="B")
    assert_exact(got["bytes_per_conversion"], nd + nz, f"{call}['bytes_per_conversion']",
                 why="read one layout, write the other", unit="B")
    for key, want in (("t_conversion_s", t_one), ("t_total_s", t_total), ("step_s", step), ("waste_fraction", waste)):
        assert_number(got[key], want, f"{call}[{key!r}]")


@grade(layout_conversion_cost, "correctness", points=3,
       hint="A TransData reads the tensor in one layout and writes it in the other: which of the two is padded?")
def test_layout_cost_worked_examples():
    """Lecture §5.2: [4, 4096, 8192] fp16 at 1.2 TB/s × 320 beside 0.3 s: 0.447 ms each, 143.2 ms, 32.3 % of the
    step. 17 × 17 pads to 32 × 32 (3.5×), 1 × 100 to 16 × 112 (17.9×)."""
    nd = 4 * 4096 * 8192 * 2
    t_one = 2 * nd / 1.2e12
    check_cost(([4, 4096, 8192], 2, 1.2e12, 320, 0.3), {}, nd, nd, t_one, 320 * t_one, 0.3 + 320 * t_one,
               320 * t_one / (0.3 + 320 * t_one))
    assert_number(320 * t_one, 0.1431655765333, "the lecture's 143 ms (self-check)")
    check_cost(([17, 17], 2, 1e12), {}, 578, 2048, 2626e-12, 2626e-12, 2626e-12, 1.0)
    check_cost(([1, 100], 2, 1e12), {}, 200, 3584, 3784e-12, 3784e-12, 3784e-12, 1.0)
    check_cost(([3, 2, 17, 17], 4, 1e12), {"n_conversions": 0, "compute_s": 0.0}, 6 * 1156, 6 * 4096,
               (6 * 1156 + 6 * 4096) / 1e12, 0.0, 0.0, 0.0)
    check_cost(([5, 3], 1, 1e9), {"n_conversions": 2, "compute_s": 1e-8, "h0": 2, "w0": 2}, 15, 24, 39e-9,
               78e-9, 88e-9, 78 / 88)


@grade(layout_conversion_cost, "correctness", points=1,
       hint="When is the padded NZ tensor exactly the size of the ND one, and can it ever be smaller?")
@settings(max_examples=50)
@given(batch=st.lists(st.integers(1, 4), max_size=2), h=st.integers(1, 300), w=st.integers(1, 300),
       b=st.sampled_from([1, 2, 4]), n=st.integers(0, 400), compute=st.floats(0, 1.0), fractal=fractals)
def test_layout_cost_bounds(batch, h, w, b, n, compute, fractal):
    """bytes ≥ 2·nd_bytes, with equality iff h0 | H and w0 | W; the time adds up; waste ∈ [0, 1]."""
    h0, w0 = fractal
    shape = [*batch, h, w]
    call = f"layout_conversion_cost({shape}, {b}, 1.5e12, {n}, {compute!r}, {h0}, {w0})"
    got = layout_conversion_cost(shape, b, 1.5e12, n, compute, h0, w0)
    nd = math.prod(shape) * b
    assert_exact(got["nd_bytes"], nd, f"{call}['nd_bytes']", unit="B")
    per = got["bytes_per_conversion"]
    divides = h % h0 == 0 and w % w0 == 0
    assert per >= 2 * nd and (per == 2 * nd) == divides, (
        f"{call}: {per} B per conversion vs 2·nd = {2 * nd}: equal exactly when the fractal divides both dims"
    )
    assert_number(got["t_total_s"], n * per / 1.5e12, f"{call}['t_total_s']")
    assert_number(got["step_s"], compute + n * per / 1.5e12, f"{call}['step_s']")
    assert 0.0 <= got["waste_fraction"] <= 1.0, f"{call}['waste_fraction'] = {got['waste_fraction']!r}"


@grade(layout_conversion_cost, "correctness", points=1, validation=True,
       hint="A shape of one dim has no matrix; a dim of 0 or 2.0 is no size. Which argument does each name?")
def test_layout_cost_rejects_bad_arguments():
    """A shape of one dim, float or zero dims, bad element sizes, bandwidths, counts and times raise ValueError."""
    assert_rejects_all(layout_conversion_cost, [
        (([4096], 2, 1e12), "shape"), ((4096, 2, 1e12), "shape"), ((None, 2, 1e12), "shape"),
        (([4, 4096.0, 8192], 2, 1e12), "shape[1]"), (([4, 0, 8192], 2, 1e12), "shape[1]"),
        (([16, 16], 0, 1e12), "elem_bytes"), (([16, 16], 2.0, 1e12), "elem_bytes"),
        (([16, 16], 2, 0.0), "hbm_bytes_per_s"), (([16, 16], 2, -1e12), "hbm_bytes_per_s"),
        (([16, 16], 2, math.inf), "hbm_bytes_per_s"),
        (([16, 16], 2, 1e12, -1), "n_conversions"), (([16, 16], 2, 1e12, 3.0), "n_conversions"),
        (([16, 16], 2, 1e12, 1, -0.1), "compute_s"), (([16, 16], 2, 1e12, 1, math.nan), "compute_s"),
        (([16, 16], 2, 1e12, 1, 0.0, 0), "h0"), (([16, 16], 2, 1e12, 1, 0.0, 16, 1.5), "w0"),
    ])


# ---- detect_backend, device_string ---------------------------------------------------------------------


@grade(detect_backend, "correctness", points=1,
       hint="A ROCm build answers torch.cuda.is_available() too: what else must the probe look at?")
def test_detect_backend_worked_examples():
    """NPU first; ROCm told apart from CUDA by torch.version.hip; no torch_npu means no NPU."""
    for args, want in [((True, True, True, None), "npu"), ((True, False, True, "6.0"), "rocm"),
                       ((False, False, True, None), "cuda"), ((False, True, False, None), "cpu")]:
        got = detect_backend(*args)
        assert got == want, f"detect_backend{args} = {got!r}, expected {want!r}"


@grade(detect_backend, "correctness", points=2,
       hint="Write out the probe order: which conditions must hold together, and which probe wins a tie?")
def test_detect_backend_all_combinations():
    """All 16 combinations of the three probes × (hip None, hip '6.1.40091')."""
    for npu_importable, npu_ok, cuda_ok, hip in itertools.product((False, True), (False, True), (False, True),
                                                                  (None, "6.1.40091")):
        if npu_importable and npu_ok:
            want = "npu"
        elif cuda_ok:
            want = "cuda" if hip is None else "rocm"
        else:
            want = "cpu"
        args = (npu_importable, npu_ok, cuda_ok, hip)
        got = detect_backend(*args)
        assert got == want, f"detect_backend{args} = {got!r}, expected {want!r}"


@grade(detect_backend, "correctness", points=1, validation=True,
       hint="A probe's answer is a bool, and a HIP version is a string or None. What about 1 or 6.0?")
def test_detect_backend_rejects_bad_arguments():
    """Ints or strings for flags, a float HIP version raise ValueError naming the argument."""
    assert_rejects_all(detect_backend, [
        ((1, True, True, None), "torch_npu_importable"), ((True, "yes", True, None), "npu_available"),
        ((False, False, 0, None), "cuda_available"), ((False, False, True, 6.0), "hip_version"),
        ((False, False, None, None), "cuda_available"),
    ])


@grade(device_string, "correctness", points=1,
       hint="Which device type does PyTorch use for AMD GPUs, and does the CPU take an index?")
def test_device_string_worked_examples():
    """npu:1, cuda:1 for both CUDA and ROCm, cpu without an index."""
    for args, want in [(("npu", 1), "npu:1"), (("rocm", 1), "cuda:1"), (("cuda", 0), "cuda:0"), (("cuda",), "cuda:0"),
                       (("cpu", 3), "cpu"), (("cpu",), "cpu"), (("npu", 7), "npu:7")]:
        got = device_string(*args)
        call = f"device_string({', '.join(repr(a) for a in args)})"  # ('cuda',) reads device_string('cuda',)
        assert got == want, f"{call} = {got!r}, expected {want!r}"
    for backend in ("npu", "cuda", "rocm", "cpu"):  # the probe's answer is always a valid device
        assert device_string(detect_backend(backend == "npu", backend == "npu", backend in ("cuda", "rocm"),
                                            "6.0" if backend == "rocm" else None), 2) == device_string(backend, 2)


@grade(device_string, "correctness", points=1, validation=True,
       hint="'gpu', 'CUDA' or 'xpu' are not backends this layer knows; an index is a whole number ≥ 0.")
def test_device_string_rejects_bad_arguments():
    """Unknown backends and float or negative indices raise ValueError naming the argument."""
    assert_rejects_all(device_string, [
        (("gpu", 0), "backend"), (("CUDA", 0), "backend"), ((None, 0), "backend"), (("xpu",), "backend"),
        (("cuda", -1), "index"), (("npu", 1.0), "index"), (("cuda", True), "index"),
    ])
