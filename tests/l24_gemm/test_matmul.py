"""L24 · matmul in Triton: correctness against fp64, counted traffic against the tiled ledger, GPU speed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.kit import (
    SubmissionError,
    TiledLedger,
    assert_tiled_loads,
    award_speedup,
    count_traffic,
    describe,
    grade,
    learner,
    on_device,
    perf,
)

UNIT = "l24_gemm"
matmul = learner(UNIT, "gemm", "matmul", kernel=True)

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
# Tolerance, elementwise: |C - C64| <= RTOL·|C64| + ACC·sqrt(k)·u32·(|A|·|B|) + FLOOR, where C64 is the
# product of the same fp16/bf16 inputs in fp64 (TF32 cannot occur: no fp32 input).
# - RTOL: C is rounded once to its dtype, at most eps/2 relative; RTOL is eps (2x margin).
# - ACC: fp32 accumulation of k products; its rounding errors grow like sqrt(k)·u32 times the sum of
#   |a·b| (Higham & Mary's probabilistic bound, lambda = 4). An fp16/bf16 accumulator errs ~2^13x more.
# - FLOOR: fp16's smallest subnormal spacing (2^-24), for outputs that round to subnormals.
RTOL = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}
ACC, U32, FLOOR = 4.0, 2.0**-24, 2.0**-24
KINDS = ("normal", "positive", "tiny")
EDGES = (1, 2, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 128, 129, 150)
KERNEL_EXAMPLES = settings(max_examples=12)


@dataclass(frozen=True)
class MatmulCase:
    """An m×k by k×n product: value kind, dtype, and whether A and B are row-major or transposed views."""

    m: int
    n: int
    k: int
    dtype: str
    kind: str = "normal"
    a_layout: str = "row"
    b_layout: str = "row"
    seed: int = 0

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(self.seed)
        return (_matrix(self.m, self.k, self.kind, self.a_layout, g).to(DTYPES[self.dtype]),
                _matrix(self.k, self.n, self.kind, self.b_layout, g).to(DTYPES[self.dtype]))


def _matrix(rows: int, cols: int, kind: str, layout: str, g: torch.Generator) -> torch.Tensor:
    shape = (rows, cols) if layout == "row" else (cols, rows)
    if kind == "normal":
        x = torch.randn(shape, generator=g, dtype=torch.float64)
    elif kind == "positive":  # no cancellation: C grows like k, where a low-precision accumulator shows
        x = torch.rand(shape, generator=g, dtype=torch.float64)
    else:  # tiny: products near fp16's subnormal range
        x = torch.randn(shape, generator=g, dtype=torch.float64) * 2e-3
    return x if layout == "row" else x.t()  # "col": a transposed view, strides (1, rows)


@st.composite
def matmul_cases(draw: st.DrawFn, max_dim: int = 150) -> MatmulCase:
    dim = st.one_of(st.sampled_from([e for e in EDGES if e <= max_dim]), st.integers(1, max_dim))
    return MatmulCase(draw(dim), draw(dim), draw(dim), draw(st.sampled_from(sorted(DTYPES))),
                      draw(st.sampled_from(KINDS)), draw(st.sampled_from(["row", "col"])),
                      draw(st.sampled_from(["row", "col"])), draw(st.integers(0, 2**16)))


def assert_matmul_close(c: object, a: torch.Tensor, b: torch.Tensor, what: str, *, acc: float = ACC) -> None:
    """C has shape m×n and a's dtype, and is within the tolerance above of the fp64 product."""
    if not isinstance(c, torch.Tensor):
        raise AssertionError(f"{what}: expected a torch.Tensor, got {type(c).__name__}")
    want_shape = (a.shape[0], b.shape[1])
    assert tuple(c.shape) == want_shape, f"{what}: shape {tuple(c.shape)}, expected {want_shape}"
    assert c.dtype == a.dtype, f"{what}: dtype {c.dtype}, expected {a.dtype} (C has the inputs' dtype)"
    a64, b64 = a.detach().cpu().double(), b.detach().cpu().double()
    exact, scale = a64 @ b64, a64.abs() @ b64.abs()
    allowed = RTOL[a.dtype] * exact.abs() + acc * math.sqrt(a.shape[1]) * U32 * scale + FLOOR
    err = (c.detach().cpu().double() - exact).abs()
    bad = ~(err <= allowed)  # NaN is bad
    if not bad.any():
        return
    i, j = (int(x) for x in bad.nonzero()[0])
    raise AssertionError(
        f"{what}: {int(bad.sum())} of {c.numel()} elements differ; first at [{i}, {j}]: got "
        f"{c[i, j].item():.6g}, expected {exact[i, j].item():.6g} (error {err[i, j].item():.3g}, allowed "
        f"{allowed[i, j].item():.3g}: one rounding to {str(a.dtype).removeprefix('torch.')} plus fp32 accumulation)"
    )


def label(a: torch.Tensor, b: torch.Tensor, **blocks: int) -> str:
    extra = "".join(f", {k}={v}" for k, v in blocks.items())
    return f"matmul(a: {describe(a)}, b: {describe(b)}{extra})"


def check_matmul(a: torch.Tensor, b: torch.Tensor, **blocks: int) -> torch.Tensor:
    c = matmul(a, b, **blocks)
    assert_matmul_close(c, a, b, label(a, b, **blocks))
    return c


def learner_blocks() -> dict[str, int]:
    """The block sizes the learner's matmul uses by default: the ledger is held against these."""
    defaults = matmul.defaults()
    blocks = {name: defaults.get(name) for name in ("block_m", "block_n", "block_k")}
    bad = [n for n, v in blocks.items() if isinstance(v, bool) or not isinstance(v, int)]
    if bad:
        raise SubmissionError(
            f"matmul must keep the keyword arguments block_m, block_n, block_k with int defaults (the "
            f"grader reads them to compute your ledger); missing or not an int: {', '.join(bad)}"
        )
    return blocks


# ---- correctness ----------------------------------------------------------------------------------


@grade(matmul, "correctness", points=4,
       hint="What do the lanes of the last tile hold in m, n and k, and are they all masked?")
@KERNEL_EXAMPLES
@given(case=matmul_cases())
@example(case=MatmulCase(1, 1, 1, "float16"))
@example(case=MatmulCase(129, 65, 130, "bfloat16", "normal", "col", "row", 1))
@example(case=MatmulCase(17, 150, 31, "float16", "positive", "row", "col", 2))
def test_matmul_matches_fp64(case):
    """Your block sizes, any m, n, k (tails, 1), fp16/bf16, row-major and transposed inputs: equals A·B in fp64."""
    check_matmul(*case.tensors())


@grade(matmul, "correctness", points=2,
       hint="Does your launcher pass block_m, block_n and block_k to the kernel, and size the grid with them?")
@pytest.mark.parametrize("case, blocks", [
    (MatmulCase(40, 24, 50, "float16", seed=3), dict(block_m=16, block_n=16, block_k=16)),
    (MatmulCase(70, 100, 33, "bfloat16", "normal", "col", "col", 4), dict(block_m=32, block_n=64, block_k=16)),
    (MatmulCase(130, 20, 90, "float16", "positive", seed=5), dict(block_m=64, block_n=16, block_k=64)),
])
def test_matmul_honours_block_sizes(case, blocks):
    """Block sizes given by the caller (smaller and larger than the matrices) give the same product."""
    check_matmul(*case.tensors(), **blocks)


@grade(matmul, "correctness", points=2,
       hint="Which stride steps along k in A, and which in B? Index with all four, never assume contiguity.")
def test_matmul_strided_views():
    """Non-contiguous views: a transposed A, a B taken every other column, a row slice of a larger A."""
    g = torch.Generator().manual_seed(6)
    base_a = torch.randn(96, 80, generator=g).half()
    base_b = torch.randn(60, 170, generator=g).half()
    check_matmul(base_a.t()[:, 10:70], base_b[:, ::3])  # (80×60) · (60×57)
    check_matmul(base_a[5:90:2, :60], base_b[:, 7:100])  # (43×60) · (60×93), row stride 160
    sq = torch.randn(64, 64, generator=g).bfloat16()
    check_matmul(sq, sq.t())


@grade(matmul, "correctness", points=2,
       hint="What dtype is your accumulator? Adding 0.3 to 1500 in fp16 rounds it away.")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matmul_long_k_accumulates_in_fp32(dtype):
    """k = 3000 positive values (C ≈ 750, no cancellation): only an fp32 accumulator stays within tolerance."""
    a, b = MatmulCase(16, 16, 3000, str(dtype).removeprefix("torch."), "positive", seed=7).tensors()
    check_matmul(a, b, block_m=16, block_n=16, block_k=64)


# ---- efficiency -------------------------------------------------------------------------------------


# The contract's largest tile: block_m and block_n at most 256. The padded ledger (and the formula's tile counts) is
# computed on the learner's blocks only within it (grader/kit/traffic_ledger.py): a larger declared block is refused.
LARGEST_BLOCK = 256


def tiled_loads(m: int, n: int, k: int, es: int, block_m: int, block_n: int) -> TiledLedger:
    """A once per column of tiles, B once per row of tiles; m and n padded to the blocks (k is always masked:
    a wrapped k would add products twice)."""
    def formula(m: int, n: int, k: int) -> int:
        return es * (m * k * math.ceil(n / block_n) + k * n * math.ceil(m / block_m))

    basis = (f"A read ceil(n/block_n) = {math.ceil(n / block_n)}×, B read ceil(m/block_m) = "
             f"{math.ceil(m / block_m)}×")
    tiles = math.ceil(m / block_m) * math.ceil(n / block_n)
    return TiledLedger.of(formula, dict(m=m, n=n, k=k), dict(m=block_m, n=block_n),
                          bounds=dict(m=LARGEST_BLOCK, n=LARGEST_BLOCK), name="the tiled ledger", basis=basis,
                          tiles=tiles)


def assert_tiled_traffic(a: torch.Tensor, b: torch.Tensor, **blocks: int) -> None:
    """Correct C, one launch, C stored once, A and B loaded as the tiled ledger says (tail tiles masked or padded)."""
    used = {**learner_blocks(), **blocks}
    what = label(a, b, **blocks) if blocks else f"{label(a, b)} with your defaults {used}"
    with count_traffic() as t:
        c = matmul(a, b, **blocks)
    assert_matmul_close(c, a, b, what)
    (m, k), n, es = a.shape, b.shape[1], a.element_size()
    assert t.launches == 1, f"{what}: {t.launches} kernel launches, expected exactly 1 ({t.summary()})"
    assert t.bytes_stored == m * n * es, (
        f"{what}: stored {t.bytes_stored:,} B, the ledger says {m * n * es:,} B (write each element of C once)"
    )
    assert_tiled_loads(t, tiled_loads(m, n, k, es, used["block_m"], used["block_n"]), what)


@grade(matmul, "efficiency", points=3,
       hint="Per k-step, a tile needs one slice of A and one of B. How many times does your loop load each?")
@pytest.mark.parametrize("case", [MatmulCase(200, 150, 100, "float16", seed=8),
                                  MatmulCase(130, 129, 70, "bfloat16", "normal", "col", "row", 9)])
def test_traffic_matches_tiled_ledger(case):
    """With your default blocks: loads = A·ceil(n/BN) + B·ceil(m/BM), stores = C once, one launch."""
    assert_tiled_traffic(*case.tensors())


@grade(matmul, "efficiency", points=2,
       hint="Smaller tiles re-read A and B more often: does your traffic follow the block sizes you were given?")
@pytest.mark.parametrize("case, blocks", [
    (MatmulCase(70, 50, 45, "bfloat16", seed=10), dict(block_m=32, block_n=16, block_k=16)),
    (MatmulCase(33, 140, 64, "float16", "normal", "row", "col", 11), dict(block_m=16, block_n=64, block_k=32)),
])
def test_traffic_follows_block_sizes(case, blocks):
    """The caller's block sizes: the same ledger, for those sizes."""
    assert_tiled_traffic(*case.tensors(), **blocks)


# ---- gpu_perf -----------------------------------------------------------------------------------------


def time_matmul(n: int, *, device: str) -> dict:
    """On the device, where the learner's code runs (on_device): one checked call, then the timing."""
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device=device).manual_seed(12)
    a = torch.randn(n, n, device=device, dtype=torch.bfloat16, generator=g)
    b = torch.randn(n, n, device=device, dtype=torch.bfloat16, generator=g)
    c, result = perf.time_learner(
        matmul, lambda f: f(a, b), [a, b], baselines={"torch.matmul": lambda: torch.matmul(a, b)},
        kernels_ref=("matmul", lambda ref: ref.matmul(a, b)), device=device, generator=g)
    rows = slice(0, 256)  # a band of rows, checked in fp64 by the grader
    return {"a": a[rows], "b": b, "c": c[rows], "perf": result.as_dict()}


@grade(matmul, "gpu_perf", points=3,
       hint="Compute-bound at 4096³: bigger tiles (128×128 and up), more warps and pipeline stages.")
def test_matmul_speed(award):
    """4096³ bf16 with your defaults: full marks at 0.7× torch.matmul (cuBLAS), partial below."""
    n = perf.size(4096, 128)
    r = on_device(time_matmul, n, device=perf.device())
    # tensor cores accumulate less exactly: 4x ACC
    assert_matmul_close(r["c"], r["a"], r["b"], f"matmul {n}³ on the GPU (rows 0-255)", acc=4 * ACC)
    tflops = 2 * n**3 / (r["perf"]["medians_ms"]["learner"] * 1e9)
    award_speedup(award, r["perf"], over="torch.matmul", full_at=0.7, tflops=tflops,
                  label="speedup_vs_torch")
