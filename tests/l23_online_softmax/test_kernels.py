"""L23 · softmax_fused and softmax_online in Triton: correctness, counted traffic, GPU speed."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.kit import (
    LogitCase,
    TiledLedger,
    assert_close,
    assert_tiled_loads,
    award_speedup,
    count_traffic,
    describe,
    grade,
    learner,
    logit_cases,
    logits,
    on_device,
    perf,
)

UNIT = "l23_online_softmax"
softmax_fused = learner(UNIT, "softmax", "softmax_fused", kernel=True)
softmax_online = learner(UNIT, "softmax", "softmax_online", kernel=True)

KERNEL_EXAMPLES = settings(max_examples=25)
# Each hostile kind at a width that is not a power of two, plus the overflow demo of the lecture.
HOSTILE = [LogitCase(3, 129, "float32", kind, 7) for kind in ("large", "negative", "neg_inf", "ties")]


def reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax computed in fp64 by torch: the grader's oracle (TF32 plays no part in it)."""
    return torch.softmax(x.to(torch.float64), dim=-1)


def check_softmax(fn, x: torch.Tensor, **kwargs) -> torch.Tensor:
    what = f"{fn.name}(x: {describe(x)}{''.join(f', {k}={v}' for k, v in kwargs.items())})"
    y = fn(x, **kwargs)
    assert_close(y, reference(x), dtype=x.dtype, what=what)
    return y


# ---- softmax_fused: correctness ------------------------------------------------------------------


@grade(softmax_fused, "correctness", points=4,
       hint="Which value should a masked-off lane hold so it never wins the max and adds 0 to the sum?")
@KERNEL_EXAMPLES
@given(case=logit_cases())
@example(case=LogitCase(1, 1, "float32", "normal", 0))
@example(case=LogitCase(2, 1000, "float16", "large", 1))
def test_fused_matches_softmax(case):
    """Any shape (tails, width 1), fp32/fp16/bf16, hostile values: equals softmax within the dtype's tolerance."""
    check_softmax(softmax_fused, case.tensor())


@grade(softmax_fused, "correctness", points=2, hint="e^x overflows past x ≈ 88.7 in fp32: what do you subtract first?")
def test_fused_hostile_rows():
    """[1000, 1001, 1002] (the lecture's overflow demo), ±1e4 rows, all-negative rows, -inf entries, ties."""
    check_softmax(softmax_fused, torch.tensor([[1000.0, 1001.0, 1002.0]]))
    for case in HOSTILE:
        check_softmax(softmax_fused, case.tensor())


@grade(softmax_fused, "correctness", points=1, hint="Does your kernel use the row stride, or assume rows are packed?")
def test_fused_wide_and_strided_rows():
    """The widest row of the contract (16384 columns), and a non-contiguous view of a larger tensor."""
    check_softmax(softmax_fused, logits(2, 16384, torch.float16, "normal", 3))
    base = logits(4, 300, torch.float32, "normal", 4)
    check_softmax(softmax_fused, base[::2, 7:250])


# ---- softmax_fused: efficiency -------------------------------------------------------------------


# The contract's widest column block: block_n at most 1024 (the speed test's). The padded ledger is computed on
# block_n only within it (grader/kit/traffic_ledger.py).
LARGEST_BLOCK_N = 1024


def assert_traffic(fn, x: torch.Tensor, *, reads: int, block_n: int | None = None, **kwargs) -> None:
    """Output correct, exactly one launch, y written once, x read at least once and at most `reads` times; in
    column blocks of block_n, the tail block masked or padded to the block (None: the whole row, masked)."""
    if block_n is not None:
        kwargs["block_n"] = block_n
    with count_traffic() as t:
        y = fn(x, **kwargs)
    assert_close(y, reference(x), dtype=x.dtype, what=f"{fn.name}(x: {describe(x)})")
    (rows, cols), es = x.shape, x.element_size()
    label = f"{fn.name}(x: {describe(x)}{''.join(f', {k}={v}' for k, v in kwargs.items())})"
    assert t.launches == 1, f"{label}: {t.launches} kernel launches, expected exactly 1 ({t.summary()})"
    assert t.bytes_stored == x.numel() * es, (
        f"{label}: stored {t.bytes_stored:,} B, the ledger says {x.numel() * es:,} B (write each element of y once)"
    )
    ledger = TiledLedger.of(lambda cols: reads * rows * cols * es, dict(cols=cols), dict(cols=block_n),
                            bounds=dict(cols=LARGEST_BLOCK_N), tiles=rows,
                            name=f"the {'fused' if reads == 1 else 'online'} ledger",
                            fewest=rows * cols * es,
                            basis="read x once" if reads == 1 else f"at most {reads} passes over x")
    assert_tiled_loads(t, ledger, label)


@grade(softmax_fused, "efficiency", points=3, hint="Once a row is in registers, why load it again?")
@pytest.mark.parametrize("shape, dtype", [((8, 1000), torch.float32), ((3, 4097), torch.float16)])
def test_fused_reads_once_writes_once(shape, dtype):
    """Counted traffic matches the "fused" ledger: read x once, write y once, one launch."""
    assert_traffic(softmax_fused, logits(*shape, dtype, "normal", 5), reads=1)


# ---- softmax_online: correctness -----------------------------------------------------------------


@grade(softmax_online, "correctness", points=4,
       hint="When a later tile raises the max, what must happen to the d you accumulated?")
@KERNEL_EXAMPLES
@given(case=logit_cases(max_rows=3, max_cols=600), block_n=st.sampled_from([16, 32, 64, 128]))
@example(case=LogitCase(1, 1, "float32", "normal", 0), block_n=16)
@example(case=LogitCase(2, 200, "float32", "large", 1), block_n=32)
def test_online_matches_softmax(case, block_n):
    """Any width, tiles narrower and wider than the row, fp32/fp16/bf16, hostile values."""
    check_softmax(softmax_online, case.tensor(), block_n=block_n)


@grade(softmax_online, "correctness", points=2, hint="What does a tile that holds only -inf do to your running state?")
def test_online_max_rises_across_tiles():
    """Rows whose max keeps rising tile after tile, and rows whose first tiles are all -inf."""
    rising = torch.arange(300, dtype=torch.float32).reshape(1, 300) * 0.5
    check_softmax(softmax_online, rising, block_n=16)
    masked = logits(2, 100, torch.float32, "normal", 6)
    masked[:, :40] = -torch.inf
    check_softmax(softmax_online, masked, block_n=16)
    for case in HOSTILE:
        check_softmax(softmax_online, case.tensor(), block_n=32)


# ---- softmax_online: efficiency ------------------------------------------------------------------


@grade(softmax_online, "efficiency", points=3,
       hint="The max and the denominator can come from the same pass: the online recurrence.")
@pytest.mark.parametrize("shape, dtype, block_n", [((4, 1000), torch.float32, 64), ((2, 515), torch.bfloat16, 32)])
def test_online_two_reads_one_write(shape, dtype, block_n):
    """Counted traffic within the "online" ledger: at most two reads of x, one write of y, one launch."""
    assert_traffic(softmax_online, logits(*shape, dtype, "normal", 8), reads=2, block_n=block_n)


# ---- gpu_perf --------------------------------------------------------------------------------------


BAND = slice(0, 256)  # rows of the timed input and output sent back and checked in fp64 by the grader


def time_softmax(fn, kwargs: dict, rows: int, cols: int, *, device: str) -> dict:
    """On the device, where the learner's code runs (on_device): one checked call, then the timing."""
    g = torch.Generator(device=device).manual_seed(23)
    x = torch.randn(rows, cols, device=device, dtype=torch.float16, generator=g)
    y, result = perf.time_learner(
        fn, lambda f: f(x, **kwargs), [x], baselines={"torch.softmax": lambda: torch.softmax(x, dim=-1)},
        kernels_ref=("softmax", lambda ref: ref.softmax(x)), device=device, generator=g)
    return {"x": x[BAND], "y": y[BAND], "perf": result.as_dict()}


def _speed_test(award, fn, *, full_at: float, **kwargs) -> None:
    rows, cols = perf.size(8192, 16), perf.size(4096, 2048)
    r = on_device(time_softmax, fn, kwargs, rows, cols, device=perf.device())
    what = f"{fn.name} on the GPU ({rows}×{cols}, rows 0-255)"
    assert_close(r["y"], reference(r["x"]), dtype=torch.float16, what=what)
    award_speedup(award, r["perf"], over="torch.softmax", full_at=full_at, label="speedup_vs_torch")


@grade(softmax_fused, "gpu_perf", points=3, hint="A fused softmax is memory-bound: aim for torch.softmax's bandwidth.")
def test_fused_speed(award):
    """8192×4096 fp16: full marks at 0.9× torch.softmax's speed, partial below."""
    _speed_test(award, softmax_fused, full_at=0.9)


@grade(softmax_online, "gpu_perf", points=2,
       hint="Two reads and one write: 2/3 of a fused kernel's speed is the ceiling.")
def test_online_speed(award):
    """8192×4096 fp16, block_n=1024: full marks at 0.6× torch.softmax's speed."""
    _speed_test(award, softmax_online, full_at=0.6, block_n=1024)
