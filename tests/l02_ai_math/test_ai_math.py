"""L02 · Math for AI infra: strides, GEMM ledger, linear backward FLOPs, global mean loss, LoRA, byte units."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, NIC_400G_BYTES_PER_S, GiB
from grader.kit import assert_exact, assert_number, assert_parts, assert_rejects, grade, learner

UNIT = "l02_ai_math"
contiguous_strides = learner(UNIT, "ai_math", "contiguous_strides")
gemm_ledger = learner(UNIT, "ai_math", "gemm_ledger")
linear_train_flops = learner(UNIT, "ai_math", "linear_train_flops")
global_mean_loss = learner(UNIT, "ai_math", "global_mean_loss")
lora_params = learner(UNIT, "ai_math", "lora_params")
to_bytes = learner(UNIT, "ai_math", "to_bytes")

dims = st.integers(1, 2**16)


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


def assert_mean(got: object, want: float, what: str) -> None:
    """Within 1e-9 relative of ``want``, or 1e-12 absolute: subnormal per-token losses have no relative precision."""
    assert_number(got, want, what, rel=1e-9, abs_tol=1e-12)


# ---- contiguous_strides -----------------------------------------------------------------------------


@grade(contiguous_strides, "correctness", points=2,
       hint="The last dimension moves by 1; each earlier one by the size of everything after it.")
def test_strides_worked_examples():
    """(2, 3) → (3, 1); [B, S, H] = (2, 2048, 4096) → (8 388 608, 4096, 1) (L05); () → (); (7,) → (1,)."""
    for shape, want in [((2, 3), (3, 1)), ((2, 2048, 4096), (8_388_608, 4096, 1)), ((), ()), ((7,), (1,)),
                        ((2, 32, 2048, 128), (8_388_608, 262_144, 128, 1))]:
        got = contiguous_strides(shape)
        assert tuple(got) == want, f"contiguous_strides({shape}) = {got!r}, expected {want}"


@grade(contiguous_strides, "correctness", points=2, hint="What does torch.empty give for a size-0 or size-1 dimension?")
@given(shape=st.lists(st.integers(0, 6), max_size=5))
def test_strides_match_torch(shape):
    """Same strides as torch.empty(shape).stride(), including size-0 and size-1 dimensions."""
    want = torch.empty(shape).stride()
    got = contiguous_strides(tuple(shape))
    assert tuple(got) == want, f"contiguous_strides({tuple(shape)}) = {got!r}, torch says {want}"


@grade(contiguous_strides, "correctness", points=1, hint="Raise ValueError naming the bad dimension, e.g. shape[1].",
       validation=True)
@pytest.mark.parametrize("shape, name", [((2, -3), "shape[1]"), ((2.0, 3), "shape[0]")])
def test_strides_reject_bad_sizes(shape, name):
    """Negative or float sizes raise ValueError naming the dimension."""
    assert_rejects(contiguous_strides, (shape,), name)


# ---- gemm_ledger ---------------------------------------------------------------------------------------


def gemm_oracle(m: int, k: int, n: int, e: int) -> dict[str, int]:
    a, b, c = m * k * e, k * n * e, m * n * e
    return {"flops": 2 * m * k * n, "read_a": a, "read_b": b, "write_c": c, "bytes": a + b + c}


@grade(gemm_ledger, "correctness", points=2,
       hint="Each of the M·N outputs is a length-K dot product: K multiplies and K adds.")
def test_gemm_course_q2():
    """M = K = 4096, N = 16 384, fp16: 549 755 813 888 FLOPs, 301 989 888 B, intensity 1820.44 (L02 Q2)."""
    got = gemm_ledger(4096, 4096, 16384, 2)
    what = "gemm_ledger(4096, 4096, 16384, 2)"
    assert_named_parts(got, gemm_oracle(4096, 4096, 16384, 2), what)
    assert_exact(got["flops"], 549_755_813_888, f"{what}['flops']", why="2·M·K·N")
    assert_exact(got["bytes"], 301_989_888, f"{what}['bytes']", why="A, B and C once each", unit="B")
    assert round(got["flops"] / got["bytes"], 2) == 1820.44


@grade(gemm_ledger, "correctness", points=2,
       hint="A is m×k, B is k×n, C is m×n: each read or written once, elem_bytes per element.")
@given(m=dims, k=dims, n=dims, e=st.sampled_from([1, 2, 4, 8]))
def test_gemm_parts(m, k, n, e):
    """Every part for any shape and element size; the default element size is 2 (fp16/bf16)."""
    assert_named_parts(gemm_ledger(m, k, n, e), gemm_oracle(m, k, n, e), f"gemm_ledger({m}, {k}, {n}, {e})")
    assert_named_parts(gemm_ledger(m, k, n), gemm_oracle(m, k, n, 2), f"gemm_ledger({m}, {k}, {n})")


@grade(gemm_ledger, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 4, 4), "m"), ((4, -1, 4), "k"), ((4, 4, 4.0), "n"),
                                        ((4, 4, 4, 0), "elem_bytes")])
def test_gemm_rejects_bad_arguments(args, name):
    """Zero, negative or float dimensions and zero element sizes raise ValueError naming the argument."""
    assert_rejects(gemm_ledger, args, name)


# ---- linear_train_flops ----------------------------------------------------------------------------------


@grade(linear_train_flops, "correctness", points=2,
       hint="Backward needs two GEMMs: one for dX = G·Wᵀ, one for dW = Xᵀ·G.")
def test_linear_course_example():
    """B = 8, S = 2048, W 4096 × 16 384: forward 8·B·S·H² = 2.199e12, backward 4.398e12 (L02 §9.1)."""
    fwd = 8 * 8 * 2048 * 4096**2
    want = {"forward": fwd, "backward_input": fwd, "backward_weight": fwd, "total": 3 * fwd}
    assert_named_parts(linear_train_flops(8 * 2048, 4096, 4 * 4096), want, "linear_train_flops(16384, 4096, 16384)",
                       total="total")


@grade(linear_train_flops, "correctness", points=2, hint="Write each GEMM's (M, K, N) and use 2MKN for each.")
@given(t=dims, d_in=dims, d_out=dims)
def test_linear_parts(t, d_in, d_out):
    """2·T·d_in·d_out for each of the three GEMMs, for any shape: training is 3× the forward."""
    f = 2 * t * d_in * d_out
    want = {"forward": f, "backward_input": f, "backward_weight": f, "total": 3 * f}
    assert_named_parts(linear_train_flops(t, d_in, d_out), want, f"linear_train_flops({t}, {d_in}, {d_out})",
                             total="total")


@grade(linear_train_flops, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 4, 4), "n_tokens"), ((4, 4.0, 4), "d_in"), ((4, 4, -4), "d_out")])
def test_linear_rejects_bad_arguments(args, name):
    """Zero, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(linear_train_flops, args, name)


# ---- global_mean_loss ---------------------------------------------------------------------------------


@grade(global_mean_loss, "correctness", points=2,
       hint="A rank with more tokens must weigh more: is your answer the mean over all tokens?")
def test_global_loss_course_example():
    """(7 tokens, 2.0) and (5 tokens, 3.0): 29/12 = 2.41667, not the mean of means 2.5 (L02 §9.6)."""
    assert_number(global_mean_loss([(7, 2.0), (5, 3.0)]), 29 / 12, "global_mean_loss([(7, 2.0), (5, 3.0)]) (29/12)",
                  rel=1e-12)
    assert_number(global_mean_loss([(7, 2.0), (0, 9.0), (5, 3.0)]), 29 / 12,
                  "global_mean_loss([(7, 2.0), (0, 9.0), (5, 3.0)]) (a rank with 0 tokens must not change the mean)",
                  rel=1e-12)


@grade(global_mean_loss, "correctness", points=2, hint="Compare with the plain mean over every token's loss.")
@given(ranks=st.lists(st.lists(st.floats(0, 20), min_size=1, max_size=30), min_size=1, max_size=8))
def test_global_loss_equals_mean_over_tokens(ranks):
    """For per-token losses split over ranks: equals the mean over all tokens."""
    per_rank = [(len(r), math.fsum(r) / len(r)) for r in ranks]
    want = math.fsum(x for r in ranks for x in r) / sum(len(r) for r in ranks)
    assert_mean(global_mean_loss(per_rank), want, f"global_mean_loss({per_rank}) (the mean over every token)")


@grade(global_mean_loss, "correctness", points=1,
       hint="No tokens at all has no mean: raise ValueError naming per_rank.", validation=True)
@pytest.mark.parametrize("per_rank", [[], [(0, 1.0)], [(-2, 1.0), (5, 1.0)], [(2.5, 1.0)], [(3, math.nan)]])
def test_global_loss_rejects_bad_input(per_rank):
    """No tokens, negative or float token counts, NaN losses raise ValueError naming per_rank."""
    assert_rejects(global_mean_loss, (per_rank,), "per_rank")


# ---- lora_params ----------------------------------------------------------------------------------------


@grade(lora_params, "correctness", points=2, hint="A is r × d_in, B is d_out × r.")
def test_lora_worked_examples():
    """4096 × 4096, r = 16: 131 072 (0.78 % of 16 777 216); LLaMA-3-8B's Wk (4096 → 1024), r = 8: 40 960."""
    assert_exact(lora_params(4096, 4096, 16), 131_072, "lora_params(4096, 4096, 16)")
    assert round(100 * 131_072 / 4096**2, 2) == 0.78
    assert_exact(lora_params(4096, 1024, 8), 40_960, "lora_params(4096, 1024, 8)")


@grade(lora_params, "correctness", points=2, hint="Does your count use d_in and d_out each once?")
@given(d_in=dims, d_out=dims, data=st.data())
def test_lora_closed_form(d_in, d_out, data):
    """r · (d_in + d_out) for any shape and valid rank."""
    r = data.draw(st.integers(1, min(d_in, d_out)))
    assert_exact(lora_params(d_in, d_out, r), r * (d_in + d_out), f"lora_params({d_in}, {d_out}, {r})")


@grade(lora_params, "correctness", points=1,
       hint="A rank above min(d_in, d_out) is no longer low-rank: raise ValueError naming rank.", validation=True)
@pytest.mark.parametrize("args, name", [((4096, 4096, 0), "rank"), ((16, 4096, 32), "rank"), ((0, 8, 1), "d_in"),
                                        ((8, 8.0, 1), "d_out")])
def test_lora_rejects_bad_arguments(args, name):
    """Rank 0 or above min(d_in, d_out), zero or float sizes raise ValueError naming the argument."""
    assert_rejects(lora_params, args, name)


# ---- to_bytes ------------------------------------------------------------------------------------------


@grade(to_bytes, "correctness", points=3, hint="GB is 10⁹, GiB is 2³⁰, and a lower-case b is a bit.")
def test_to_bytes_worked_examples():
    """400 Gb → 50 GB (L09); 80 GiB vs 80 GB; 40 GiB of KV = 42 949 672 960 B = 42.95 GB (erratum #3); 1.5 GiB.

    And amounts where float arithmetic is off by one byte: 4.1 MB is 4 100 000 B but ``int(4.1 * 10**6)`` is
    4 099 999; past 2⁵³ B a float cannot hold every int, so ``round`` fails too."""
    for args, want in [((400, "Gb"), NIC_400G_BYTES_PER_S), ((80, "GiB"), 80 * GiB), ((80, "GB"), 80 * GB),
                       ((40, "GiB"), 42_949_672_960), ((42.94967296, "GB"), 42_949_672_960),
                       ((1.5, "GiB"), 1_610_612_736), ((0.1, "GB"), 100_000_000), ((512, "KiB"), 524_288),
                       ((1, "Kb"), 125), ((2, "TiB"), 2 * 2**40), ((0, "MB"), 0),
                       ((4.1, "MB"), 4_100_000), ((0.57, "MB"), 570_000), ((1.005, "KB"), 1005),
                       ((2**53 + 1, "B"), 2**53 + 1), ((9007199.254740993, "GB"), 9_007_199_254_740_993)]:
        assert_exact(to_bytes(*args), int(want), f"to_bytes{args}", unit="B")


@grade(to_bytes, "correctness", points=2,
       hint="Use exact arithmetic: 0.1 · 10⁹ in floats is not 100 000 000 exactly in every case.")
@given(n=st.integers(0, 10**6), unit=st.sampled_from(["B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"]),
       tenths=st.integers(0, 9))
def test_to_bytes_exact(n, unit, tenths):
    """Whole amounts of every unit, and amounts with one decimal place of decimal units, converted exactly."""
    factor = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KiB": 2**10, "MiB": 2**20,
              "GiB": 2**30, "TiB": 2**40}[unit]
    assert_exact(to_bytes(n, unit), n * factor, f"to_bytes({n}, {unit!r})", unit="B")
    if unit in ("KB", "MB", "GB", "TB"):
        amount = float(f"{n}.{tenths}")
        assert_exact(to_bytes(amount, unit), (10 * n + tenths) * factor // 10, f"to_bytes({amount!r}, {unit!r})",
                     unit="B")


@grade(to_bytes, "correctness", points=1,
       hint="Refuse what the table does not hold, exactly as written ('gb' is not a unit: GB or Gb?), and amounts "
            "that are not a whole number of bytes: raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((1, "gb"), "unit"), ((1, "GIB"), "unit"), ((1, "gigabytes"), "unit"),
                                        ((-1, "GB"), "amount"), ((0.3, "B"), "amount"), ((math.inf, "GB"), "amount"),
                                        ((0.001, "Kb"), "amount")])
def test_to_bytes_rejects_bad_arguments(args, name):
    """Unknown or wrongly cased units, negative, infinite or fractional-byte amounts raise ValueError."""
    assert_rejects(to_bytes, args, name)
