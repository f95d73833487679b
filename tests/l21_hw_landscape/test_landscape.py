"""L21 · spec-sheet ratios (ridge points, peak FLOPs, the decode floor) and data parallelism on mixed chips."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.constants import GPUS, TB, TFLOPS
from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "l21_hw_landscape"
ridge_points = learner(UNIT, "landscape", "ridge_points")
peak_flops = learner(UNIT, "landscape", "peak_flops")
decode_floor_s = learner(UNIT, "landscape", "decode_floor_s")
hetero_dp_step = learner(UNIT, "landscape", "hetero_dp_step")
balance_batch = learner(UNIT, "landscape", "balance_batch")

H100, A100 = GPUS["H100-SXM"], GPUS["A100-80G"]
BAD_REALS = [0, -1.0, float("nan"), float("inf"), True, "3.35"]


# ---- ridge_points -------------------------------------------------------------------------------------

COURSE_TABLE = {"V100": (125, 0.9), "A100": (312, 2.0), "H100": (989, 3.35), "B200": (2250, 8.0), "Rubin": (5000, 22.0)}


@grade(ridge_points, "correctness", points=2,
       hint="How many FLOPs can each chip do in the time it reads one byte from HBM?")
def test_ridge_points_worked_examples():
    """The lecture's table: V100 138.9, A100 156, H100 295.2, B200 281.25 (below H100), Rubin 227.3."""
    got = ridge_points(COURSE_TABLE)
    want = {"V100": 125 / 0.9, "A100": 156.0, "H100": 989 / 3.35, "B200": 281.25, "Rubin": 5000 / 22}
    assert isinstance(got, dict) and set(got) == set(want), f"ridge_points(course table) = {got!r}, keys {sorted(want)}"
    for name, value in want.items():
        assert_number(got[name], value, f"ridge_points(course table)[{name!r}]")
    assert_number(got["V100"], 138.8889, "V100 ridge", rel=1e-6)
    assert_number(got["H100"], 295.2239, "H100 ridge", rel=1e-6)
    assert got["B200"] < got["H100"], "B200's ridge is below H100's: its bandwidth grew faster than its FLOPs"
    # the datasheet rows of grader.constants: A100 80 GB SXM at 2.039 TB/s
    datasheet = {name: (g.bf16_flops / TFLOPS, g.hbm_bytes_per_s / TB) for name, g in GPUS.items()}
    got = ridge_points(datasheet)
    assert_number(got["A100-80G"], 153.0162, "ridge_points(datasheet)['A100-80G'] (312 / 2.039)", rel=1e-6)
    assert_number(got["H200"], 989 / 4.8, "ridge_points(datasheet)['H200']")


@grade(ridge_points, "correctness", points=1, hint="Does a chip's ridge depend on which other chips are in the table?")
@settings(max_examples=40)
@given(rows=st.dictionaries(st.text("abcdefgh", min_size=1, max_size=4),
                            st.tuples(st.floats(0.1, 1e5), st.floats(0.01, 100)), min_size=1, max_size=6))
def test_ridge_points_random_rows(rows):
    got = ridge_points(rows)
    assert set(got) == set(rows), f"ridge_points({rows!r}) has keys {sorted(got)}, expected {sorted(rows)}"
    for name, (peak, bw) in rows.items():
        assert_number(got[name], peak / bw, f"ridge_points(...)[{name!r}] for ({peak!r}, {bw!r})")


@grade(ridge_points, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_ridge_points_rejects():
    table = [(({},), "table"), (([("H100", (989, 3.35))],), "table"), ((None,), "table"),
             (({"H100": 989},), "table['H100']"), (({"H100": (989, 3.35, 80)},), "table['H100']"),
             (({"H100": "989"},), "table['H100']")]
    table += [(({"A100": (312, 2.0), "H100": (bad, 3.35)},), "table['H100'][0]") for bad in BAD_REALS]
    table += [(({"H100": (989, bad)},), "table['H100'][1]") for bad in BAD_REALS]
    assert_rejects_all(ridge_points, table)


# ---- peak_flops -----------------------------------------------------------------------------------------


@grade(peak_flops, "correctness", points=2,
       hint="How many SMs does an H100 have, how many dense FP16 FLOPs does each do per cycle, and at what clock?")
def test_peak_flops_worked_examples():
    """H100 132 × 4096 × 1.83 GHz = 989.4 T; with A100's 2048 per SM, half; A100 108 × 2048 × 1.41 GHz = 312 T."""
    cases = [((H100.sms, 4096, 1.83e9), 989_429_760_000_000), ((H100.sms, 2048, 1.83e9), 494_714_880_000_000),
             ((A100.sms, 2048, 1.41e9), 311_869_440_000_000), ((32, 8192, 1.8e9), 471_859_200_000_000),
             ((1, 2 * 16**3, 1), 8192), ((3, 7, 2.5e9), 52_500_000_000)]
    for args, want in cases:
        assert_number(peak_flops(*args), want, f"peak_flops{args}")
    assert_number(peak_flops(H100.sms, 4096, 1.83e9), H100.bf16_flops, "H100 peak vs its datasheet", rel=1e-3)
    assert_number(peak_flops(A100.sms, 2048, 1.41e9), A100.bf16_flops, "A100 peak vs its datasheet", rel=1e-3)


@grade(peak_flops, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_peak_flops_rejects():
    table = [((132.0, 4096, 1.83e9), "units"), ((True, 4096, 1.83e9), "units"), ((0, 4096, 1.83e9), "units"),
             ((132, 4096.0, 1.83e9), "flops_per_cycle"), ((132, 0, 1.83e9), "flops_per_cycle"),
             ((132, False, 1.83e9), "flops_per_cycle")]
    table += [((132, 4096, bad), "clock_hz") for bad in BAD_REALS]
    assert_rejects_all(peak_flops, table)


# ---- decode_floor_s -----------------------------------------------------------------------------------


@grade(decode_floor_s, "correctness", points=2,
       hint="To produce one token at batch 1, how many bytes must each GPU read from HBM, and how fast can it?")
def test_decode_floor_worked_examples():
    """70B in fp16 (140 GB) on one H100: 41.79 ms per token at best; over 8 GPUs 5.22 ms."""
    w = 140_000_000_000
    assert_number(decode_floor_s(w, 3.35e12), 0.04179104, "decode_floor_s(140 GB, 3.35e12)", rel=1e-6)
    assert_number(decode_floor_s(w, 3.35e12), w / 3.35e12, "decode_floor_s(140 GB, 3.35e12)")
    assert_number(decode_floor_s(w, H100.hbm_bytes_per_s, 8), 0.00522388, "decode_floor_s(140 GB, 3.35e12, 8)",
                  rel=1e-6)
    assert_number(decode_floor_s(w, 3.35e12, n_gpus=8), w / 8 / 3.35e12, "decode_floor_s(..., n_gpus=8)")
    assert_number(decode_floor_s(2 * 8_030_261_248, A100.hbm_bytes_per_s), 2 * 8_030_261_248 / 2.039e12,
                  "decode_floor_s(LLaMA-3-8B in bf16, A100)")
    assert_number(decode_floor_s(0, 1e12), 0.0, "decode_floor_s(0, 1e12)")


@grade(decode_floor_s, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_decode_floor_rejects():
    table = [((140e9, 3.35e12), "weight_bytes"), ((-1, 3.35e12), "weight_bytes"), ((True, 3.35e12), "weight_bytes"),
             ((140, 3.35e12, 0), "n_gpus"), ((140, 3.35e12, 8.0), "n_gpus")]
    table += [((140, bad), "hbm_bytes_per_s") for bad in BAD_REALS]
    assert_rejects_all(decode_floor_s, table)


# ---- hetero_dp_step -----------------------------------------------------------------------------------

DP_KEYS = ("iteration_ms", "wait_ms", "efficiency", "mean_efficiency")


def check_step(times: list, want: dict) -> None:
    call = f"hetero_dp_step({times!r})"
    got = hetero_dp_step(times)
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {list(DP_KEYS)}"
    missing = [key for key in DP_KEYS if key not in got]
    assert not missing, f"{call} has no key(s) {missing}"
    assert_number(got["iteration_ms"], want["iteration_ms"], f"{call}['iteration_ms']")
    assert_number(got["mean_efficiency"], want["mean_efficiency"], f"{call}['mean_efficiency']")
    for key in ("wait_ms", "efficiency"):
        assert len(got[key]) == len(times), f"{call}[{key!r}] = {got[key]!r}: one value per rank, in rank order"
        for i, (g, w) in enumerate(zip(got[key], want[key], strict=True)):
            assert_number(g, w, f"{call}[{key!r}][{i}]", abs_tol=1e-12)


@grade(hetero_dp_step, "correctness", points=2,
       hint="At the all-reduce, who waits for whom, and for how long?")
def test_hetero_dp_step_worked_example():
    """42 ms beside 71 ms: every step takes 71 ms; the fast ranks wait 29 ms; mean efficiency 0.7958."""
    check_step([42, 71], {"iteration_ms": 71.0, "wait_ms": [29.0, 0.0], "efficiency": [42 / 71, 1.0],
                          "mean_efficiency": 113 / 142})
    got = hetero_dp_step([42, 71])
    assert_number(got["efficiency"][0], 0.5915493, "efficiency of the 42 ms rank", rel=1e-6)
    assert_number(got["mean_efficiency"], 0.7957746, "mean efficiency", rel=1e-6)
    # 64 fast and 64 slow ranks: the same mean, 46 % MFU falls to 36.6 %, not 18 %
    fleet = [42.0] * 64 + [71.0] * 64
    check_step(fleet, {"iteration_ms": 71.0, "wait_ms": [29.0] * 64 + [0.0] * 64,
                       "efficiency": [42 / 71] * 64 + [1.0] * 64, "mean_efficiency": 113 / 142})
    check_step([5.5], {"iteration_ms": 5.5, "wait_ms": [0.0], "efficiency": [1.0], "mean_efficiency": 1.0})
    check_step([3, 9, 6], {"iteration_ms": 9.0, "wait_ms": [6.0, 0.0, 3.0], "efficiency": [1 / 3, 1.0, 2 / 3],
                           "mean_efficiency": 18 / 27})


@grade(hetero_dp_step, "correctness", points=1, hint="Which rank never waits, and can a rank be busier than the step?")
@settings(max_examples=40)
@given(times=st.lists(st.floats(0.01, 1e4), min_size=1, max_size=16))
def test_hetero_dp_step_properties(times):
    slowest = max(times)
    check_step(times, {"iteration_ms": slowest, "wait_ms": [slowest - t for t in times],
                       "efficiency": [t / slowest for t in times],
                       "mean_efficiency": sum(times) / (len(times) * slowest)})
    got = hetero_dp_step(times)
    assert all(0 < e <= 1 for e in got["efficiency"]), f"hetero_dp_step({times!r}): an efficiency outside (0, 1]"
    assert_number(max(got["efficiency"]), 1.0,
                  f"max(hetero_dp_step({times!r})['efficiency']) (the slowest rank is busy the whole step)")


@grade(hetero_dp_step, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_hetero_dp_step_rejects():
    table = [(([],), "compute_ms"), ((42,), "compute_ms"), (("42",), "compute_ms"), ((None,), "compute_ms")]
    table += [(([42, bad],), "compute_ms[1]") for bad in BAD_REALS]
    assert_rejects_all(hetero_dp_step, table)


# ---- balance_batch --------------------------------------------------------------------------------------


def hamilton(b: int, rates: list) -> list[int]:
    """The reference: exact quotas, floors, the rest to the largest remainders, ties to the lower index."""
    exact = [Fraction(str(r)) for r in rates]
    quotas = [b * r / sum(exact) for r in exact]
    parts = [q.numerator // q.denominator for q in quotas]
    for i in sorted(range(len(rates)), key=lambda i: (parts[i] - quotas[i], i))[: b - sum(parts)]:
        parts[i] += 1
    return parts


def check_balance(b: int, rates: list, want: list[int]) -> None:
    got = balance_batch(b, rates)
    call = f"balance_batch({b}, {rates!r})"
    assert isinstance(got, list | tuple) and all(type(x) is int for x in got), (
        f"{call} = {got!r}, expected a list of ints")
    assert list(got) == want, f"{call} = {got!r}, expected {want!r}"


@grade(balance_batch, "correctness", points=2,
       hint="The 42 ms chip processes samples 71/42 times as fast as the 71 ms one: how should 1024 samples be split?")
def test_balance_batch_worked_examples():
    """1024 over chips of 42 and 71 ms per 512 samples: [643, 381], both ranks now ~52.8 ms."""
    check_balance(1024, [71, 42], [643, 381])
    check_balance(1024, [1 / 42, 1 / 71], [643, 381])
    check_balance(10, [1, 1, 1], [4, 3, 3])  # a three-way tie: the lowest index gets the extra sample
    check_balance(7, [3, 2, 2], [3, 2, 2])
    check_balance(0, [5, 1], [0, 0])
    check_balance(5, [2.5], [5])
    check_balance(1024, [1, 1, 1, 1, 1, 1, 1, 1], [128] * 8)
    fast, slow = 643 * 42 / 512, 381 * 71 / 512
    assert abs(fast - slow) < 0.1, "after balancing, both ranks take about 52.8 ms"


@grade(balance_batch, "correctness", points=1,
       hint="Is 2 × 0.3 / 0.4 exactly 1.5 in floating point? What does that do to a tie between remainders?")
def test_balance_batch_decimal_ties():
    """Quotas computed exactly from the decimals as written: 0.3 : 0.1 of 2 is 1.5 / 0.5, a tie → [2, 0]."""
    check_balance(2, [0.3, 0.1], [2, 0])
    check_balance(2, [3.3, 1.1], [2, 0])
    check_balance(5, [0.1, 0.2, 0.3, 0.4], [1, 1, 1, 2])


@grade(balance_batch, "correctness", points=2,
       hint="Whatever the rates, do the parts add up to the batch, and how far can a part be from its exact share?")
@settings(max_examples=60)
@given(b=st.integers(0, 5000), rates=st.lists(st.integers(1, 1000) | st.sampled_from([0.1, 0.25, 1.5, 2.2, 3.3]),
                                                min_size=1, max_size=8),
       k=st.integers(2, 9))
def test_balance_batch_properties(b, rates, k):
    got = list(balance_batch(b, rates))
    call = f"balance_batch({b}, {rates!r})"
    assert got == hamilton(b, rates), f"{call} = {got!r}, expected {hamilton(b, rates)!r} (largest remainder)"
    assert sum(got) == b, f"{call} sums to {sum(got)}, expected {b}"
    total = sum(Fraction(str(r)) for r in rates)
    for i, (part, r) in enumerate(zip(got, rates, strict=True)):
        assert abs(part - b * Fraction(str(r)) / total) < 1, f"{call}[{i}] = {part} is 1 or more from its quota"
    ints = [r for r in rates if isinstance(r, int)]
    if ints:
        scaled = [r * k for r in ints]
        assert list(balance_batch(b, scaled)) == list(balance_batch(b, ints)), (
            f"balance_batch({b}, {scaled}) differs from balance_batch({b}, {ints}): only the ratios matter")
        assert list(balance_batch(k * sum(ints), ints)) == [k * r for r in ints], (
            f"balance_batch({k * sum(ints)}, {ints}) should be exactly {[k * r for r in ints]}")


@grade(balance_batch, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_balance_batch_rejects():
    table = [((1024.0, [1, 1]), "global_batch"), ((-1, [1, 1]), "global_batch"), ((True, [1, 1]), "global_batch"),
             ((1024, []), "throughputs"), ((1024, 5), "throughputs"), ((1024, "71"), "throughputs")]
    table += [((1024, [71, bad]), "throughputs[1]") for bad in BAD_REALS]
    assert_rejects_all(balance_batch, table)

