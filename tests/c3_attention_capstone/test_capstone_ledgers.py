"""C3 · the capstone's ledgers: attention's roofline, online softmax by blocks, column reads of a padded
shared-memory tile, and the HBM bytes of FA1's and FA2's loop orders."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "c3_attention_capstone"
attention_roofline = learner(UNIT, "capstone", "attention_roofline")
online_softmax_stream = learner(UNIT, "capstone", "online_softmax_stream")
column_read_conflict = learner(UNIT, "capstone", "column_read_conflict")
fa_loop_order_bytes = learner(UNIT, "capstone", "fa_loop_order_bytes")

A100_PEAK, A100_BW = 312e12, 2.039e12  # dense fp16 Tensor Core FLOP/s and HBM bytes/s (the course's A100)
COURSE_X = [2.3, 1.1, 5.8, 3.4, 9.2, 8.1, 4.5, 6.7, 0.4, 7.3]  # the capstone's lab 2


def l25_attention_hbm_bytes(n: int, d: int, b: int) -> int:
    """Standard attention (l25's convention): Q, K, V read, O written, S and P written and read once each."""
    return 4 * n * d * b + 4 * n * n * b


def l25_flash_attention_hbm_bytes(n: int, d: int, block_m: int, b: int) -> int:
    """FA2 (l25's convention): Q read and O written once, K and V once per Q tile, L = m + log l in fp32."""
    return 2 * n * d * b + 2 * math.ceil(n / block_m) * n * d * b + 4 * n


# ---- attention_roofline --------------------------------------------------------------------------------------


@grade(attention_roofline, "correctness", points=3,
       hint="8N² + 8Nd is already bytes for fp16: did you multiply by 2 again? And what is the ridge of the A100?")
def test_roofline_course_numbers():
    """N = 4096, d = 128 on the A100: 138 412 032 B (97 % is S and P), AI 62.06 < ridge 153.0; N = 32 768: 2.40×."""
    r = attention_roofline(4096, 128, A100_PEAK, A100_BW)
    assert_exact(r["flops"], 8_589_934_592, "flops (4n²d)")
    assert_exact(r["naive_bytes"], 138_412_032, "naive_bytes (4n²b + 4ndb)", unit="B")
    assert_exact(r["ideal_bytes"], 4_194_304, "ideal_bytes (4ndb)", unit="B")
    assert_number(r["ai_naive"], 8_589_934_592 / 138_412_032, "ai_naive")
    assert_number(r["ai_ideal"], 2048.0, "ai_ideal")
    assert_number(r["ai_limit"], 64.0, "ai_limit (d / elem_bytes)")
    assert_number(r["ridge"], A100_PEAK / A100_BW, "ridge (peak / bandwidth)")
    assert r["memory_bound"] is True, f"memory_bound = {r['memory_bound']!r}: 62.06 < 153.0, so True (a bool)"
    assert_number(r["t_compute_s"], 8_589_934_592 / A100_PEAK, "t_compute_s")
    assert_number(r["t_naive_s"], 138_412_032 / A100_BW, "t_naive_s (memory-bound: bytes / bandwidth)")
    assert_number(r["t_ideal_s"], r["t_compute_s"], "t_ideal_s (compute-bound)")
    long = attention_roofline(32768, 128, A100_PEAK, A100_BW)
    assert_exact(long["naive_bytes"], 8_623_489_024, "naive_bytes at N = 32 768", unit="B")
    assert_number(long["t_naive_s"] / long["t_ideal_s"], 2.400217248, "t_naive / t_ideal at N = 32 768", rel=1e-8)


@grade(attention_roofline, "correctness", points=2,
       hint="4n²d / (4n²b + 4ndb): what does it tend to as n grows, and can it ever reach that limit?")
@settings(max_examples=40)
@given(n=st.integers(1, 2**17), d=st.sampled_from([16, 32, 64, 80, 128, 256]), b=st.sampled_from([1, 2, 4]))
def test_roofline_intensity_below_its_limit(n, d, b):
    """naive_bytes = l25's attention bytes; ai_naive < d/b and rises with n; ai_ideal = 4n²d / 4ndb = n/b."""
    r = attention_roofline(n, d, A100_PEAK, A100_BW, elem_bytes=b)
    assert_exact(r["naive_bytes"], l25_attention_hbm_bytes(n, d, b), f"naive_bytes(n={n}, d={d}, b={b})", unit="B")
    assert_exact(r["flops"], 4 * n * n * d, f"flops(n={n}, d={d})")
    assert_number(r["ai_limit"], d / b, f"ai_limit(d={d}, b={b}) = d/b")
    assert r["ai_naive"] < d / b, f"ai_naive {r['ai_naive']!r} must stay below d/b = {d / b}"
    assert attention_roofline(n + 1, d, A100_PEAK, A100_BW, elem_bytes=b)["ai_naive"] > r["ai_naive"]
    assert_number(r["ai_ideal"], n / b, f"ai_ideal(n={n}, b={b}) = 4n²d / 4ndb")
    assert r["memory_bound"] is (r["ai_naive"] < A100_PEAK / A100_BW)


@grade(attention_roofline, "correctness", points=1, hint="Which argument is wrong? Name it in the ValueError.",
       validation=True)
def test_roofline_rejects_bad_arguments():
    """bool or zero n, float d, zero elem_bytes, a zero or infinite peak or bandwidth: ValueError naming it."""
    assert_rejects_all(attention_roofline, [
        ((True, 128, A100_PEAK, A100_BW), "n"), ((0, 128, A100_PEAK, A100_BW), "n"),
        ((4096, 128.0, A100_PEAK, A100_BW), "d"), ((4096, 128, A100_PEAK, A100_BW, 0), "elem_bytes"),
        ((4096, 128, 0.0, A100_BW), "peak_flops"), ((4096, 128, A100_PEAK, math.inf), "hbm_bytes_per_s"),
    ])


# ---- online_softmax_stream ------------------------------------------------------------------------------------


def safe_softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    e = [math.exp(x - m) for x in xs]
    s = math.fsum(e)
    return [v / s for v in e]


@grade(online_softmax_stream, "correctness", points=3,
       hint="When the second block raises the maximum from 3 to 4, what happens to the 1.135 you had?")
def test_stream_course_examples():
    """[1, 3, 2, 4] by 2: l = 1.5530018 (§2.2); lab 2's ten values by 3: l = 1.6114829, α = [0, 0.0334, 1, 1]."""
    r = online_softmax_stream([1, 3, 2, 4], 2)
    assert len(r["trace"]) == 2 and all(isinstance(s, tuple) and len(s) == 2 for s in r["trace"]), (
        f"trace = {r['trace']!r}: one (m, l) tuple per block")
    first = [(3, 1.1353352832366128), (4, 1.5530017927759192)]
    for (m, denom), (want_m, want_l) in zip(r["trace"], first, strict=True):
        assert_number(m, want_m, "trace m")
        assert_number(denom, want_l, "trace l")
    for got, want in zip(r["alphas"], [0.0, math.exp(-1)], strict=True):
        assert_number(got, want, "alphas", abs_tol=1e-15)
    r = online_softmax_stream(COURSE_X, 3)
    want = [(5.8, 1.0392926605240143), (9.2, 1.370583232970909), (9.2, 1.4619142417715991), (9.2, 1.6114828609942342)]
    assert len(r["trace"]) == 4, f"10 values in blocks of 3: 4 blocks, got {len(r['trace'])}"
    for k, ((m, denom), (want_m, want_l)) in enumerate(zip(r["trace"], want, strict=True)):
        assert_number(m, want_m, f"trace[{k}] m")
        assert_number(denom, want_l, f"trace[{k}] l")
    for k, (got, w) in enumerate(zip(r["alphas"], [0.0, 0.0333732699603261, 1.0, 1.0], strict=True)):
        assert_number(got, w, f"alphas[{k}]", abs_tol=1e-15)
    assert_number(r["m"], 9.2, "m")
    assert_number(r["l"], 1.6114828609942342, "l")
    assert_number(r["probs"][4], 0.6205464694691394, "probs[4]")


@grade(online_softmax_stream, "correctness", points=3,
       hint="Does the final (m, l) depend on where the blocks are cut? It must not.")
@settings(max_examples=40)
@given(xs=st.lists(st.floats(-50, 50), min_size=1, max_size=40), block=st.integers(1, 45))
def test_stream_matches_safe_softmax(xs, block):
    """probs = safe softmax (1e-12), sum to 1; final (m, l) = one element at a time's, whatever the block size."""
    r = online_softmax_stream(xs, block)
    want = safe_softmax(xs)
    assert len(r["probs"]) == len(xs)
    for i, (p, w) in enumerate(zip(r["probs"], want, strict=True)):
        assert_number(p, w, f"probs[{i}]", rel=1e-12, abs_tol=1e-15)
    assert_number(math.fsum(r["probs"]), 1.0, "sum of probs", rel=1e-12)
    m, denom = -math.inf, 0.0  # l23's single-element state
    for x in xs:
        m_new = max(m, x)
        denom = denom * math.exp(m - m_new) + math.exp(x - m_new)
        m = m_new
    assert_number(r["m"], m, "m")
    assert_number(r["l"], denom, f"l (block_size {block})", rel=1e-12)
    assert len(r["trace"]) == len(r["alphas"]) == math.ceil(len(xs) / block)
    assert_number(r["alphas"][0], 0.0, "alphas[0] (α_1: no earlier block to rescale)")
    assert all(0.0 < a <= 1.0 for a in r["alphas"][1:]), f"alphas = {r['alphas']!r}"


@grade(online_softmax_stream, "correctness", points=1, hint="Name the argument, or the entry (xs[3]), that is wrong.",
       validation=True)
def test_stream_rejects_bad_arguments():
    """Empty or str xs, a bool or non-finite entry, a float or zero block size: ValueError naming it."""
    assert_rejects_all(online_softmax_stream, [
        (([], 2), "xs"), (("1234", 2), "xs"), ((5.0, 2), "xs"), (([1.0, 2.0, 3.0, math.nan], 2), "xs[3]"),
        (([1.0, True], 2), "xs[1]"), (([1.0, 2.0], 2.0), "block_size"), (([1.0, 2.0], 0), "block_size"),
    ])


# ---- column_read_conflict --------------------------------------------------------------------------------------


def brute_force_degree(cols: int, pad: int, eb: int, ab: int, col: int) -> int:
    """Per phase of threads, the distinct words each bank serves (written here independently)."""
    pitch = (cols + pad) * eb
    per_phase = 32 // max(1, ab // 4)
    worst = 0
    for phase in range(32 // per_phase):
        words = set()
        for t in range(phase * per_phase, (phase + 1) * per_phase):
            a = t * pitch + col * eb
            words |= {w for w in range(a // 4, (a + ab - 1) // 4 + 1)}
        by_bank: dict[int, int] = {}
        for w in words:
            by_bank[w % 32] = by_bank.get(w % 32, 0) + 1
        worst = max(worst, *by_bank.values())
    return worst


@grade(column_read_conflict, "correctness", points=3,
       hint="half s[64][64 + 8]: the pitch is 144 B = 36 words. Which bank does thread t's 2-byte read hit?")
def test_column_conflict_course_tiles():
    """Half column reads of [64][64 + P]: 32, 2, 1, 2, 4, 8-way; half2, 16-B rows; fp32 [32][32 + P] (l22)."""
    for pad, want in [(0, 32), (1, 2), (2, 1), (4, 2), (8, 4), (16, 8)]:
        assert_exact(column_read_conflict(64, pad), want, f"column_read_conflict(64, {pad}) (2-byte reads)")
    for pad, want in [(0, 32), (2, 1), (8, 4)]:
        assert_exact(column_read_conflict(64, pad, access_bytes=4), want, f"column_read_conflict(64, {pad}, half2)")
    for pad, want in [(0, 8), (8, 1), (16, 2)]:
        assert_exact(column_read_conflict(64, pad, access_bytes=16), want,
                     f"column_read_conflict(64, {pad}, access_bytes=16) (four phases of 8 threads)")
    assert_exact(column_read_conflict(32, 0, elem_bytes=4), 32, "fp32 [32][32]")
    assert_exact(column_read_conflict(32, 1, elem_bytes=4), 1, "fp32 [32][33]")


def _conflict_cases():
    def case(cols, pad, eb, ab_mult, col):
        ab = eb * ab_mult
        pitch_ok = ((cols + pad) * eb) % ab == 0
        return (cols, pad, eb, ab, col) if ab <= 16 and pitch_ok and (col * eb) % ab == 0 and (
            col * eb + ab <= cols * eb) else None

    return st.builds(case, st.integers(1, 96), st.integers(0, 40), st.sampled_from([1, 2, 4, 8]),
                     st.sampled_from([1, 2, 4, 8]), st.integers(0, 64)).filter(lambda c: c is not None)


@grade(column_read_conflict, "correctness", points=3,
       hint="Two threads reading the same 4-byte word are one broadcast, not a conflict; and 16-byte reads are "
            "served eight threads at a time.")
@settings(max_examples=60)
@given(case=_conflict_cases())
def test_column_conflict_brute_force(case):
    """Random tiles, element and access widths: the per-phase distinct-word count; fp32 = l22's gcd rule."""
    cols, pad, eb, ab, col = case
    got = column_read_conflict(cols, pad, elem_bytes=eb, access_bytes=ab, col=col)
    assert_exact(got, brute_force_degree(cols, pad, eb, ab, col),
                 f"column_read_conflict({cols}, {pad}, elem_bytes={eb}, access_bytes={ab}, col={col})")
    if eb == ab == 4:
        gcd = math.gcd(cols + pad, 32)
        assert got == gcd, f"fp32 column reads: gcd(pitch in words, 32) = {gcd}"


@grade(column_read_conflict, "correctness", points=1,
       hint="A 16-byte read needs a 16-byte-aligned row start: which argument makes the pitch 132 B?",
       validation=True)
def test_column_conflict_rejects_bad_arguments():
    """pad = 2 with 16-byte reads (pitch 132 B), a 3-byte element, an access narrower than the element, a column
    outside the row or misaligned, float cols: ValueError naming the argument."""
    assert_rejects_all(column_read_conflict, [
        ((64, -1), "pad"), ((64.0, 0), "cols"), ((0, 0), "cols"), ((64, 0, 3), "elem_bytes"),
        ((64, 0, 4, 2), "access_bytes"), ((64, 0, 2, 32), "access_bytes"), ((64, 0, 2, 2, 64), "col"),
        ((64, 0, 2, 4, 1), "col"),
    ])
    assert_rejects(column_read_conflict, (64, 2), "pad", {"access_bytes": 16})


# ---- fa_loop_order_bytes ---------------------------------------------------------------------------------------


@grade(fa_loop_order_bytes, "correctness", points=3,
       hint="FA1 keeps O, ℓ and m in HBM: who initialises them, and how often are they read and written back?")
def test_loop_order_course_numbers():
    """N = 4096, d = 128, fp16: FA1 208 699 392 B with 64-wide tiles (more than naive), FA2 136 331 264 / 69 222 400."""
    got = fa_loop_order_bytes(4096, 128, 64, 64)
    for key, want in {"fa1": 208_699_392, "fa2": 136_331_264, "naive": 138_412_032, "ideal": 4_194_304}.items():
        assert_exact(got[key], want, f"fa_loop_order_bytes(4096, 128, 64, 64)[{key!r}]", unit="B")
    assert_exact(fa_loop_order_bytes(4096, 128, 128, 64)["fa2"], 69_222_400, "fa2 with block_m = 128", unit="B")
    assert_exact(fa_loop_order_bytes(4096, 128, 128, 64)["fa1"], 208_699_392, "fa1 does not depend on block_m",
                 unit="B")
    assert_exact(fa_loop_order_bytes(4096, 128, 128, 128)["fa1"], 105_938_944, "fa1 with block_n = 128", unit="B")


@grade(fa_loop_order_bytes, "correctness", points=2,
       hint="FA2 reads K and V once per Q tile: Tr = ⌈n / block_m⌉ times. What does a ragged last tile count as?")
@settings(max_examples=40)
@given(n=st.integers(1, 5000), d=st.sampled_from([32, 64, 128]), bm=st.integers(1, 256), bn=st.integers(1, 256),
       b=st.sampled_from([1, 2, 4]))
def test_loop_order_matches_l25_and_the_formulas(n, d, bm, bn, b):
    """fa2 = l25's flash bytes, naive = l25's attention bytes, ideal = 4ndb; fa1 by its terms."""
    got = fa_loop_order_bytes(n, d, bm, bn, elem_bytes=b)
    x = n * d * b
    assert_exact(got["fa2"], l25_flash_attention_hbm_bytes(n, d, bm, b), f"fa2(n={n}, d={d}, block_m={bm})", unit="B")
    assert_exact(got["naive"], l25_attention_hbm_bytes(n, d, b), f"naive(n={n}, d={d})", unit="B")
    assert_exact(got["ideal"], 4 * x, "ideal", unit="B")
    assert_exact(got["fa1"], 3 * x + 8 * n + math.ceil(n / bn) * (3 * x + 16 * n), f"fa1(n={n}, block_n={bn})",
                 unit="B")


@grade(fa_loop_order_bytes, "correctness", points=1, hint="Name the argument that is wrong.", validation=True)
def test_loop_order_rejects_bad_arguments():
    """Floats, bools and zeros: ValueError naming the argument."""
    assert_rejects_all(fa_loop_order_bytes, [
        ((4096.0, 128, 64, 64), "n"), ((4096, 0, 64, 64), "d"), ((4096, 128, True, 64), "block_m"),
        ((4096, 128, 64, 0), "block_n"), ((4096, 128, 64, 64, 2.0), "elem_bytes"),
    ])
