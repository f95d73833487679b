"""The traffic counter against hand-counted kernels, and its bounds checks."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import triton
import triton.language as tl

from grader.instrument import traffic
from grader.instrument.traffic import KernelMemoryError, count_traffic
from grader.kit import TiledLedger, TrafficMismatch, assert_tiled_loads

traffic.install()


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _copy_twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, a + b, mask=mask)


@triton.jit
def _unmasked(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


@triton.jit
def _store_past_end(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs + 1, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.jit
def _block_ptr_copy(x_ptr, y_ptr, m, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (m, n), (n, 1), (0, 0), (BLOCK_M, BLOCK_N), (1, 0))
    dst = tl.make_block_ptr(y_ptr, (m, n), (n, 1), (0, 0), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))


@triton.jit
def _tile_copy(x_ptr, y_ptr, m, n, BLOCK: tl.constexpr, WRAP: tl.constexpr, TWICE: tl.constexpr):
    """One program per BLOCK×BLOCK tile of an m×n copy; WRAP: the tail tile's rows and columns wrapped (`% m`,
    `% n`) instead of masked on the load; TWICE: the tile loaded a second time (reuse lost)."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    inside = (rows < m) & (cols < n)
    if WRAP:  # noqa: SIM108 (a constexpr branch of a jitted kernel)
        tile = tl.load(x_ptr + (rows % m) * n + cols % n)
    else:
        tile = tl.load(x_ptr + rows * n + cols, mask=inside)
    if TWICE:
        tile += tl.load(x_ptr + rows * n + cols, mask=inside) * 0
    tl.store(y_ptr + rows * n + cols, tile, mask=inside)


@triton.jit
def _tile_copy_atomic_reread(x_ptr, y_ptr, m, n, BLOCK: tl.constexpr):
    """The tiled copy whose tile is read a second time through an atomic (adding 0 returns the element)."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    inside = (rows < m) & (cols < n)
    tile = tl.load(x_ptr + rows * n + cols, mask=inside)
    again = tl.atomic_add(x_ptr + rows * n + cols, tl.zeros_like(tile), mask=inside)
    tl.store(y_ptr + rows * n + cols, tile + again * 0, mask=inside)


@triton.jit
def _atomic_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def _launch(kernel, x, y, block=256):
    kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)


@pytest.mark.parametrize("dtype, size", [(torch.float32, 4), (torch.float16, 2), (torch.int8, 1)])
def test_masked_copy_counts_active_lanes_only(dtype, size):
    """1000 elements in 4 blocks of 256: 24 masked-off lanes move nothing."""
    x = torch.arange(1000).to(dtype)
    y = torch.empty_like(x)
    with count_traffic() as t:
        _launch(_copy, x, y)
    assert torch.equal(x, y)
    assert (t.bytes_loaded, t.bytes_stored, t.launches, t.programs) == (1000 * size, 1000 * size, 1, 4)
    assert t.kernels == ["_copy"]


def test_each_load_counts():
    x = torch.randn(300)
    with count_traffic() as t:
        _launch(_copy_twice, x, torch.empty_like(x), block=128)
    assert (t.bytes_loaded, t.bytes_stored) == (2 * 1200, 1200)


def test_launches_accumulate_and_blocks_nest():
    x = torch.randn(64)
    with count_traffic() as outer:
        _launch(_copy, x, torch.empty_like(x), block=64)
        with count_traffic() as inner:
            _launch(_copy, x, torch.empty_like(x), block=32)
    assert (inner.launches, inner.programs, inner.bytes_loaded) == (1, 2, 256)
    assert (outer.launches, outer.programs, outer.bytes_loaded) == (2, 3, 512)


def test_a_worker_counts_into_stand_ins_that_add_up_in_the_judge():
    """Batch grading: the worker counts into fresh stand-ins for the judge's open blocks and sends them as
    dicts; the judge adds each to its own block (worker.py)."""
    x = torch.randn(64)
    stand_ins = traffic.replace_open_counters(2)  # the worker, called by a judge with two blocks open
    try:
        assert traffic.open_counters() == stand_ins and len(stand_ins) == 2
        _launch(_copy, x, torch.empty_like(x), block=32)
        sent = [dataclasses.asdict(t) for t in stand_ins]
    finally:
        traffic.replace_open_counters(0)
    assert traffic.open_counters() == []
    with count_traffic() as outer, count_traffic() as inner:  # the judge
        assert traffic.open_counters() == [outer, inner]
        _launch(_copy, x, torch.empty_like(x), block=64)
        for mine, theirs in zip(traffic.open_counters(), sent, strict=True):
            mine.add(traffic.Traffic.from_record(theirs))
    assert (outer.launches, outer.programs, outer.bytes_loaded, outer.bytes_stored) == (2, 3, 512, 512)
    assert inner == outer and outer.kernels == ["_copy", "_copy"]
    assert traffic.Traffic.from_record({**sent[0], "launches": "1", "kernels": (7,)}) == traffic.Traffic(
        256, 256, 0, 1, 2, max_program_loaded=128, kernels=["7"]), (
        "a record's counts must come back as ints and its kernel names as strs")
    assert outer.max_program_loaded == 256, "the most one program loaded is a max across launches, not a sum"


def test_block_pointer_loads_count_inside_the_boundary_only():
    """A 40×24 copy through 32×32 block pointers: boundary_check masks the padding."""
    x = torch.randn(40, 24)
    y = torch.zeros_like(x)
    with count_traffic() as t:
        _block_ptr_copy[(1,)](x, y, 40, 24, BLOCK_M=32, BLOCK_N=32)
    assert t.bytes_loaded == t.bytes_stored == 32 * 24 * 4  # the first 32 rows, 24 valid columns


def test_an_atomic_counts_as_a_load_and_a_store():
    """Four programs each add their sum into out: 4 atomics of 4 B, each a load and a store (bytes_atomic says how
    much of both was atomic), so no efficiency rule misses data moved through atomics."""
    x = torch.ones(512)
    out = torch.zeros(1)
    with count_traffic() as t:
        _launch(_atomic_sum, x, out, block=128)
    assert out.item() == 512
    assert (t.bytes_loaded, t.bytes_stored, t.bytes_atomic) == (2048 + 16, 16, 16)
    assert t.max_program_loaded == 128 * 4 + 4
    assert traffic.finished_counts()[-1]["bytes_atomic"] == 16


def test_unmasked_tail_load_is_reported_with_tensor_and_line():
    x = torch.randn(1000)
    with pytest.raises(KernelMemoryError) as err, count_traffic():
        _launch(_unmasked, x, torch.empty_like(x))
    msg = str(err.value)
    assert "_unmasked line" in msg and "tl.load(x_ptr + offs)" in msg
    assert "load out of bounds of `x_ptr` (1000 float32, 1000 elements)" in msg
    assert "24 of 256 active lanes at element offsets 1000, 1001" in msg and "mask the load" in msg
    # issue 35: the advice masked by the column count but wrapped by the row count; one dimension for both
    assert "`mask=offs < n_cols`" in msg and "`offs % n_cols`" in msg and "n_rows" not in msg


def test_store_past_the_end_is_reported():
    x = torch.randn(16)
    with pytest.raises(KernelMemoryError, match=r"store out of bounds of `y_ptr`.*offsets 16"):
        _store_past_end[(1,)](x, torch.empty_like(x), 16, BLOCK=16)


def test_view_bounds_are_the_view_not_the_storage():
    """Writing one element past a slice is caught even though the storage continues."""
    base = torch.zeros(64)
    x = torch.randn(16)
    with pytest.raises(KernelMemoryError, match="`y_ptr` \\(16 float32"):
        _store_past_end[(1,)](x, base[:16], 16, BLOCK=16)
    assert base[16] == 0, "the out-of-bounds store must not reach memory"


def test_counting_does_not_change_results():
    x = torch.randn(4000)
    y1, y2 = torch.empty_like(x), torch.empty_like(x)
    _launch(_copy, x, y1)
    with count_traffic():
        _launch(_copy, x, y2)
    assert torch.equal(y1, y2) and torch.equal(y1, x)


def _copy_ledger(m: int, n: int, block: int, bound: int = 128) -> TiledLedger:
    return TiledLedger.of(lambda m, n: 4 * m * n, dict(m=m, n=n), dict(m=block, n=block),
                          bounds=dict(m=bound, n=bound), name="the copy ledger", basis="x once",
                          tiles=triton.cdiv(m, block) * triton.cdiv(n, block))


def _tiled_copy(m: int, n: int, block: int, *, wrap: bool = False, twice: bool = False, declared: int | None = None):
    """The tiled copy launched with ``block``; its ledger on the block the "learner" declares (``block`` unsaid)."""
    x = torch.randn(m, n)
    y = torch.empty_like(x)
    with count_traffic() as t:
        _tile_copy[(triton.cdiv(m, block), triton.cdiv(n, block))](x, y, m, n, BLOCK=block, WRAP=wrap, TWICE=twice)
    assert torch.equal(x, y)
    return t, _copy_ledger(m, n, declared or block)


def test_each_program_is_counted_on_its_own():
    """A 40×24 copy in 32×32 tiles: the full-height tile loads 32×24 elements, the tail tile 8×24."""
    t, _ = _tiled_copy(40, 24, 32)
    assert (t.programs, t.bytes_loaded, t.max_program_loaded) == (2, 40 * 24 * 4, 32 * 24 * 4)


def test_tiled_ledger_holds_masked_and_padded_tails_and_notes_the_padding():
    """Masked tails load the masked ledger exactly (no note); wrapped tails load in-bounds padding up to the
    padded ledger: accepted, with a "loads padding" note recorded with the traffic."""
    t, ledger = _tiled_copy(40, 24, 32)
    assert (ledger.masked, ledger.padded, ledger.per_tile) == (3840, 8192, 4096)
    assert assert_tiled_loads(t, ledger, "copy") is None
    traffic.finished_counts()
    t, ledger = _tiled_copy(40, 24, 32, wrap=True)
    assert t.bytes_loaded == ledger.padded
    note = assert_tiled_loads(t, ledger, "copy")
    assert note and "loads padding: 4,352 B" in note
    assert traffic.finished_counts()[-1]["notes"] == [note]


def test_tiled_ledger_rejects_a_reload_hidden_in_the_tail_slack():
    """A 40×24 copy whose tiles each load twice (7,680 B) stays under the padded ledger (8,192 B), yet one program
    loads 6,144 B where a padded tile needs 4,096 B: the per-program bound names the re-load."""
    t, ledger = _tiled_copy(40, 24, 32, twice=True)
    assert ledger.masked < t.bytes_loaded <= ledger.padded
    with pytest.raises(TrafficMismatch, match=r"one program loaded 6,144 B.*at most 4,096 B.*re-loads a slice"):
        assert_tiled_loads(t, ledger, "copy")
    t, ledger = _tiled_copy(64, 64, 32, twice=True)  # no tails: twice the ledger, above the padded one too
    with pytest.raises(TrafficMismatch, match=r"loaded 32,768 B.*16,384 B.*re-loads a slice.*2.00×"):
        assert_tiled_loads(t, ledger, "copy")


def test_tiled_ledger_counts_a_reread_through_atomics():
    """Each tile read once by a load and once more by an atomic add of 0: the atomic is a load, 2× the ledger."""
    x, y = torch.randn(64, 64), torch.empty(64, 64)
    with count_traffic() as t:
        _tile_copy_atomic_reread[(2, 2)](x, y, 64, 64, BLOCK=32)
    assert torch.equal(x, y) and t.bytes_atomic == 64 * 64 * 4
    with pytest.raises(TrafficMismatch, match=r"loaded 32,768 B.*16,384 B.*re-loads a slice.*2.00×"):
        assert_tiled_loads(t, _copy_ledger(64, 64, 32), "copy")


def test_tiled_ledger_refuses_blocks_above_the_contract_bound():
    """A huge declared block (the learner's default) would pad the ledger to anything: above the contract's bound,
    or not a positive int, it is refused, whatever the kernel loads; a padded dim without a bound is the author's
    error; within the bound the padded ledger stands."""
    t, ledger = _tiled_copy(40, 24, 32, twice=True, declared=4096)
    assert ledger.padded == ledger.masked and ledger.refused
    with pytest.raises(TrafficMismatch, match=r"the blocks \{m: 4096, n: 4096\} are outside the unit's contract.*"
                                              r"at most \{m: 128, n: 128\}"):
        assert_tiled_loads(t, ledger, "copy")
    for bad in (0, -32, True, 32.0):
        with pytest.raises(TrafficMismatch, match="outside the unit's contract"):
            assert_tiled_loads(t, _copy_ledger(40, 24, 32).__class__.of(
                lambda m: 4 * m, dict(m=40), dict(m=bad), bounds=dict(m=128), name="l", basis="b"), "copy")
    with pytest.raises(ValueError, match=r"no contract bound for the blocks of \['n'\]"):
        TiledLedger.of(lambda m, n: m * n, dict(m=40, n=24), dict(m=32, n=32), bounds=dict(m=128), name="l", basis="b")
    with pytest.raises(TypeError):
        TiledLedger.of(lambda m: m, dict(m=40), dict(m=32), name="l", basis="b")  # bounds is required
    assert _copy_ledger(40, 24, 128).padded == 128 * 128 * 4  # at the bound: allowed


def test_tiled_ledger_pads_only_on_the_blocks_launched_with():
    """Blocks of 64 declared, 32 launched: 6 programs for 2 declared tiles. The wrapped tails would fit the padded
    ledger of the declared blocks (64×64), but padding is granted only on the launched grid: held to the masked one."""
    t, ledger = _tiled_copy(40, 24, 32, wrap=True, declared=64)
    assert (t.programs, ledger.tiles) == (2, 1) and ledger.masked < t.bytes_loaded <= ledger.padded
    with pytest.raises(TrafficMismatch, match=r"the launch ran 2 programs where your blocks make 1 tiles"):
        assert_tiled_loads(t, ledger, "copy")
    t, ledger = _tiled_copy(40, 24, 32, declared=64)  # masked: exact on any grid
    assert assert_tiled_loads(t, ledger, "copy") is None


def test_tiled_ledger_rejects_loads_below_the_masked_ledger():
    t, ledger = _tiled_copy(40, 24, 32)
    short = dataclasses.replace(t, bytes_loaded=t.bytes_loaded - 4)
    with pytest.raises(TrafficMismatch, match="never loaded"):
        assert_tiled_loads(short, ledger, "copy")


def test_a_load_outside_the_tensor_is_a_bounds_bug_not_padding():
    x = torch.randn(1000)
    with pytest.raises(KernelMemoryError, match=r"it loads outside the tensor \(a bounds bug, not padding\)"):
        _launch(_unmasked, x, torch.empty_like(x))

