"""L22 · transpose in Triton: correctness, counted traffic (read once, write once), GPU bandwidth."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.kit import (
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

UNIT = "l22_memory_coalescing"
transpose = learner(UNIT, "transpose", "transpose", kernel=True)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int32": torch.int32}
SIZES = st.sampled_from([1, 2, 7, 31, 32, 33, 63, 64, 65, 100, 129])


def make(n_rows: int, n_cols: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Distinct values, so a misplaced element cannot match by accident."""
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n_rows * n_cols, generator=g).reshape(n_rows, n_cols)
    return perm.to(dtype) if dtype is torch.int32 else (perm.to(torch.float32) / 64).to(dtype)


def check_transpose(x: torch.Tensor, **kwargs) -> torch.Tensor:
    what = f"transpose(x: {describe(x)}{''.join(f', {k}={v}' for k, v in kwargs.items())})"
    y = transpose(x, **kwargs)  # the kernel guard refuses host copies (x.t().contiguous()) inside it
    want = x.t()
    assert isinstance(y, torch.Tensor), f"{what} returned {type(y).__name__}, expected a tensor"
    assert y.shape == want.shape, f"{what}: shape {tuple(y.shape)}, expected {tuple(want.shape)}"
    assert y.dtype == x.dtype, f"{what}: dtype {y.dtype}, expected {x.dtype}"
    assert y.is_contiguous(), (
        f"{what}: the result has strides {y.stride()}, expected a contiguous tensor {want.contiguous().stride()}: "
        "swapping strides is a view, not a transpose; write y row by row"
    )
    bad = (y != want).nonzero()
    if bad.numel():
        i, j = bad[0].tolist()
        raise AssertionError(f"{what}: {bad.shape[0]} of {y.numel()} elements wrong; first y[{i}, {j}] = "
                             f"{y[i, j].item()}, expected x[{j}, {i}] = {want[i, j].item()}")
    return y


@grade(transpose, "correctness", points=4,
       hint="Does the tile at the right and bottom edges mask both its rows and its columns?")
@settings(max_examples=25)
@given(n_rows=SIZES, n_cols=SIZES, dtype=st.sampled_from(sorted(DTYPES)), seed=st.integers(0, 3))
@example(n_rows=1, n_cols=1, dtype="float32", seed=0)
@example(n_rows=33, n_cols=70, dtype="float16", seed=1)
def test_transpose_matches(n_rows, n_cols, dtype, seed):
    """Any shape (tails in both dimensions, 1 × 1), fp32/fp16/bf16/int32, bit-exact."""
    check_transpose(make(n_rows, n_cols, DTYPES[dtype], seed))


@grade(transpose, "correctness", points=2, hint="Do you index x through its strides, and y through its own?")
def test_transpose_strided_input_and_tiles():
    """A non-contiguous view of a larger tensor, an already-transposed view, and other tile sizes."""
    base = make(90, 80, torch.float32, 5)
    check_transpose(base[::3, 7:70])
    check_transpose(base.t())
    check_transpose(make(50, 37, torch.float32, 6), block_m=16, block_n=64)
    check_transpose(make(37, 50, torch.bfloat16, 7), block_m=64, block_n=8)


# The contract's largest tile: block_m and block_n at most 128 (16K elements on chip). The padded ledger is computed
# on the learner's blocks only within it (grader/kit/traffic_ledger.py): a larger declared block is refused.
LARGEST_BLOCK = 128


def copy_loads(x: torch.Tensor, blocks: dict[str, int]) -> TiledLedger:
    """The copy ledger's loads, each element of x once; tail tiles may pad to the learner's blocks (block_m along
    x's rows, block_n along its columns), when its defaults or the caller name them."""
    used = {**transpose.defaults(), **blocks}
    bm, bn = (used.get(b) if isinstance(used.get(b), int) and not isinstance(used.get(b), bool) else None
              for b in ("block_m", "block_n"))
    (rows, cols), es = x.shape, x.element_size()
    tiles = -(-rows // bm) * -(-cols // bn) if bm and bn else None
    return TiledLedger.of(lambda rows, cols: rows * cols * es, dict(rows=rows, cols=cols), dict(rows=bm, cols=bn),
                          bounds=dict(rows=LARGEST_BLOCK, cols=LARGEST_BLOCK), name="the copy ledger",
                          basis="read each element of x once", tiles=tiles)


@grade(transpose, "efficiency", points=3, hint="Once a tile is loaded, can you store it without loading it again?")
@pytest.mark.parametrize("shape, dtype, blocks", [((96, 70), torch.float32, {}),
                                                  ((33, 130), torch.float16, {"block_m": 16, "block_n": 64})])
def test_transpose_reads_once_writes_once(shape, dtype, blocks):
    """Counted traffic: one launch, M·N elements loaded (tail tiles masked or padded), M·N stored: the copy ledger."""
    x = make(*shape, dtype, 9)
    with count_traffic() as t:
        check_transpose(x, **blocks)
    nbytes = x.numel() * x.element_size()
    label = f"transpose(x: {describe(x)}{''.join(f', {k}={v}' for k, v in blocks.items())})"
    assert t.launches == 1, f"{label}: {t.launches} kernel launches, expected exactly 1 ({t.summary()})"
    assert_tiled_loads(t, copy_loads(x, blocks), label)
    assert t.bytes_stored == nbytes, f"{label}: stored {t.bytes_stored:,} B, the ledger says {nbytes:,} B"


def time_transpose(n: int, *, device: str) -> dict:
    """On the device, where the learner's code runs (on_device): one checked call, then the timing."""
    g = torch.Generator(device=device).manual_seed(22)
    x = torch.randn(n, n, device=device, generator=g)
    out = torch.empty_like(x)
    y, result = perf.time_learner(
        transpose, lambda f: f(x), [x],
        baselines={"copy": lambda: out.copy_(x), "x.t().contiguous()": lambda: x.t().contiguous()},
        kernels_ref=("transpose", lambda ref: ref.transpose(x)), device=device, generator=g)
    band = slice(0, 256)  # rows of x and the matching columns of y, compared by the grader
    return {"x": x[band], "y": y[:, band], "shape": tuple(y.shape), "contiguous": y.is_contiguous(),
            "perf": result.as_dict()}


@grade(transpose, "gpu_perf", points=3, hint="A transpose moves as many bytes as a copy: aim for the copy's bandwidth.")
def test_transpose_speed(award):
    """8192 × 8192 fp32: full marks at 0.85× the bandwidth of a device-to-device copy of the same bytes."""
    n = perf.size(8192, 128)
    r = on_device(time_transpose, n, device=perf.device())
    what = f"transpose(x: {n}×{n} float32) on the GPU"
    assert r["shape"] == (n, n) and r["contiguous"], f"{what}: shape {r['shape']}, contiguous {r['contiguous']}"
    assert torch.equal(r["y"], r["x"].t()), f"{what}: columns 0-255 of the result are not rows 0-255 of x"
    award_speedup(award, r["perf"], over="copy", full_at=0.85, label="fraction_of_copy_bandwidth")
