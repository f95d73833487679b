"""L25 · FlashAttention-2 in NumPy (fp64): equal to naive attention, in tiles, without an N×N array."""

from __future__ import annotations

import math
import tracemalloc
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.kit import grade, learner, where_learner_runs

UNIT = "l25_flash_attention"
# audited: its memory is measured with tracemalloc where its code runs, which the audit keeps it from touching
flash_attention_numpy = learner(UNIT, "attention", "flash_attention_numpy", audited=True)

TOL = 1e-10  # fp64 end to end: tiling changes only the order of roundings (~1e-15)


@dataclass(frozen=True)
class HeadCase:
    """One head: n × d float64 q, k, v of a value kind (normal, or 'peaked': scores of ±hundreds)."""

    n: int
    d: int
    kind: str = "normal"
    seed: int = 0

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        q, k, v = (rng.standard_normal((self.n, self.d)) for _ in range(3))
        return (q * 30 if self.kind == "peaked" else q), k, v


def naive_attention(q, k, v, causal: bool, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The grader's oracle: the whole score matrix at once, max-subtracted, in fp64."""
    s = q @ k.T * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    m = s.max(axis=1, keepdims=True)
    p = np.exp(s - m)
    return p @ v / p.sum(axis=1, keepdims=True), m[:, 0] + np.log(p.sum(axis=1))


def check_fa2(case: HeadCase, **kwargs) -> None:
    q, k, v = case.arrays()
    verify(case, flash_attention_numpy(q, k, v, **kwargs), **kwargs)


def verify(case: HeadCase, got: object, **kwargs) -> None:
    """(o, lse) of the right shapes, equal to naive attention to 1e-10 (relative to 1 + |value|)."""
    q, k, v = case.arrays()
    what = f"flash_attention_numpy({case}{''.join(f', {a}={b}' for a, b in kwargs.items())})"
    assert isinstance(got, tuple) and len(got) == 2, f"{what}: return (o, lse), got {type(got).__name__}"
    o, lse = got
    scale = kwargs.get("sm_scale") or 1 / math.sqrt(case.d)
    o_ref, lse_ref = naive_attention(q, k, v, kwargs.get("causal", False), scale)
    for name, x, ref in (("o", o, o_ref), ("lse", lse, lse_ref)):
        assert isinstance(x, np.ndarray) and x.shape == ref.shape, (
            f"{what}: {name} should be an array of shape {ref.shape}, got {getattr(x, 'shape', type(x).__name__)}"
        )
        err = np.abs(x - ref) / (1 + np.abs(ref))
        if not (err <= TOL).all():  # NaN fails too
            i = np.unravel_index(np.nanargmax(np.where(np.isnan(err), np.inf, err)), err.shape)
            raise AssertionError(f"{what}: {name}{list(i)} = {x[i]!r}, naive attention gives {ref[i]!r} "
                                 f"(relative error {err[i]:.2g} > {TOL:g})")


# ---- correctness ---------------------------------------------------------------------------------


@grade(flash_attention_numpy, "correctness", points=3,
       hint="When a later K tile raises a row's max, what must happen to l and to acc?")
@settings(max_examples=30)
@given(n=st.integers(1, 90), d=st.integers(1, 40), causal=st.booleans(), kind=st.sampled_from(["normal", "peaked"]),
       block_r=st.sampled_from([1, 3, 16, 32]), block_c=st.sampled_from([1, 5, 16, 64]), seed=st.integers(0, 999))
@example(n=100, d=8, causal=False, kind="normal", block_r=16, block_c=16, seed=0)
@example(n=33, d=4, causal=True, kind="peaked", block_r=16, block_c=16, seed=1)
def test_fa2_equals_naive_attention(n, d, causal, kind, block_r, block_c, seed):
    """Any n (ragged last tiles, tiles wider than n), causal or not, scores of ±hundreds: equal to 1e-10."""
    check_fa2(HeadCase(n, d, kind, seed), causal=causal, block_r=block_r, block_c=block_c)


@grade(flash_attention_numpy, "correctness", points=2,
       hint="Did you use sm_scale when given, and 1/sqrt(d) only when it is None?")
def test_fa2_course_labs_and_scale():
    """C3's lab (N=64, d=32, Br=Bc=16), C5's (N=256, d=64, Br=Bc=64), ragged N=100, an explicit sm_scale."""
    check_fa2(HeadCase(64, 32, seed=2), block_r=16, block_c=16)
    check_fa2(HeadCase(256, 64, seed=3), block_r=64, block_c=64)
    check_fa2(HeadCase(100, 16, seed=4), causal=True, block_r=16, block_c=16)
    check_fa2(HeadCase(50, 8, seed=5), sm_scale=0.9, block_r=16, block_c=16)


# ---- efficiency: the working set -------------------------------------------------------------------

MEM_N, MEM_D, MEM_BLOCK = 2048, 8, 64


def allowed_bytes(n: int, d: int, br: int, bc: int) -> int:
    """o and lse, four length-n vectors (row statistics kept for all rows are fine), eight copies of the
    tile set (Q, K, V tiles: the SRAM ledger), four block_r × block_c score-sized arrays, and 64 KiB slack."""
    return n * d * 8 + n * 8 + 4 * n * 8 + 8 * (br * d + 2 * bc * d) * 8 + 4 * br * bc * 8 + 64 * 1024


def peak_of_call(case: HeadCase, causal: bool) -> tuple[object, int]:
    """(result, peak bytes traced) of one call, measured where the learner's code runs (batch: its worker)."""
    q, k, v = case.arrays()
    flash_attention_numpy.resolve()  # loads the learner's module: its import is not the call's memory
    tracemalloc.start()
    try:
        got = flash_attention_numpy(q, k, v, causal=causal, block_r=MEM_BLOCK, block_c=MEM_BLOCK)
        tracing, peak = tracemalloc.is_tracing(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tracing, "flash_attention_numpy stopped the grader's memory tracing (tracemalloc): do not touch it"
    return got, peak


@grade(flash_attention_numpy, "efficiency", points=3,
       hint="Which arrays grow with n × n, or block_r × n? Only o and lse may have n rows.")
@pytest.mark.parametrize("causal", [False, True])
def test_fa2_keeps_only_tiles(causal):
    """n=2048, d=8, 64×64 tiles: peak NumPy memory within o + lse + a few tiles (an S matrix is 32 MiB)."""
    case = HeadCase(MEM_N, MEM_D, seed=6)
    got, peak = where_learner_runs(peak_of_call, case, causal)
    verify(case, got, causal=causal, block_r=MEM_BLOCK, block_c=MEM_BLOCK)
    allowed = allowed_bytes(MEM_N, MEM_D, MEM_BLOCK, MEM_BLOCK)
    assert peak <= allowed, (
        f"flash_attention_numpy(n={MEM_N}, d={MEM_D}, block_r=block_c={MEM_BLOCK}, causal={causal}) allocated "
        f"{peak:,} B at its peak, more than {allowed:,} B (o, lse, a few row vectors and tiles): a block_r × n "
        f"strip is {MEM_BLOCK * MEM_N * 8:,} B, the n × n scores {MEM_N * MEM_N * 8:,} B; keep only tiles"
    )
