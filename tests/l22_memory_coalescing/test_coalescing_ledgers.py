"""L22 · the sector, bank-conflict and occupancy ledgers."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from grader.constants import GPUS
from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l22_memory_coalescing"
warp_sectors = learner(UNIT, "ledger", "warp_sectors")
bank_conflict_degree = learner(UNIT, "ledger", "bank_conflict_degree")
blocks_per_sm = learner(UNIT, "ledger", "blocks_per_sm")
occupancy = learner(UNIT, "ledger", "occupancy")


def sectors_touched(stride: int, elem_bytes: int) -> int:
    """The grader's own count: every byte each of the 32 threads reads, mapped to its 32-byte sector."""
    return len({(t * stride * elem_bytes + b) // 32 for t in range(32) for b in range(elem_bytes)})


def conflict_degree(stride: int, n_banks: int) -> int:
    """The grader's own count: distinct words per bank over the 32 threads of a warp."""
    words_of_bank: dict[int, set[int]] = {}
    for t in range(32):
        words_of_bank.setdefault(t * stride % n_banks, set()).add(t * stride)
    return max(len(w) for w in words_of_bank.values())


# ---- warp_sectors ------------------------------------------------------------------------------


@grade(warp_sectors, "correctness", points=2,
       hint="How many 4-byte elements fit in one 32-byte sector, and how many of them does stride s use?")
def test_sectors_worked_example():
    """The lecture's table: fp32 stride 1 → 4 sectors, 2 → 8, 4 → 16, 8 and 32 → 32."""
    for stride, want in [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32), (1000, 32)]:
        assert_exact(warp_sectors(stride), want, f"warp_sectors({stride})", why="fp32, 32 threads, 32-byte sectors")


@grade(warp_sectors, "correctness", points=2,
       hint="An element can be wider than a sector (a float4 is 16 B): which sectors do its bytes cover?")
@given(stride=st.integers(0, 80), elem_bytes=st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
@example(stride=0, elem_bytes=4)
@example(stride=1, elem_bytes=16)
@example(stride=3, elem_bytes=2)
def test_sectors_any_stride_and_width(stride, elem_bytes):
    """Any stride (0 is a broadcast) and element width, against a byte-by-byte count."""
    assert_exact(warp_sectors(stride, elem_bytes), sectors_touched(stride, elem_bytes),
                 f"warp_sectors({stride}, elem_bytes={elem_bytes})", why="every byte of each thread's element")


@grade(warp_sectors, "correctness", points=1, hint="What should a negative stride or a 0-byte element mean?",
       validation=True)
def test_sectors_rejects_bad_arguments():
    for args in [(-1, 4), (1, 0), (1.5, 4), (True, 4)]:
        assert_rejects(warp_sectors, args, None)


# ---- bank_conflict_degree ------------------------------------------------------------------------


@grade(bank_conflict_degree, "correctness", points=2,
       hint="Which banks do words 0, s, 2s, ... fall into? How many threads land on each?")
def test_banks_worked_example():
    """The lecture's strides: 1 → 1-way, 2 → 2, 3 → 1, 4 → 4, 32 → 32 (a tile column), 33 → 1 (padded)."""
    for stride, want in [(1, 1), (2, 2), (3, 1), (4, 4), (32, 32), (33, 1), (64, 32), (0, 1)]:
        assert_exact(bank_conflict_degree(stride), want, f"bank_conflict_degree({stride})",
                     why="n-way: the distinct words its busiest bank serves")


@grade(bank_conflict_degree, "correctness", points=2,
       hint="Two threads reading the same word get it in one broadcast; a warp always has 32 threads.")
@given(stride=st.integers(0, 200), n_banks=st.sampled_from([32, 16, 8, 64]))
@example(stride=1, n_banks=16)
def test_banks_any_stride(stride, n_banks):
    """Any stride and bank count, against a thread-by-thread count (32 threads, same word = broadcast)."""
    assert_exact(bank_conflict_degree(stride, n_banks), conflict_degree(stride, n_banks),
                 f"bank_conflict_degree({stride}, n_banks={n_banks})", why="32 threads, same word = broadcast")


# ---- occupancy -----------------------------------------------------------------------------------


def expected_blocks(threads: int, regs: int, smem: int, gpu: str) -> int:
    """The grader's own occupancy calculator (CUDA Occupancy Calculator rules, see the exercise)."""
    g = GPUS[gpu]
    warps = -(-threads // 32)
    limits = [g.max_blocks_per_sm, 64 // warps]
    limits.append(g.registers_per_sm // (-(-regs * 32 // 256) * 256) // warps)
    limits.append(g.smem_per_sm // (-(-smem // 128) * 128 + 1024))
    return min(limits)


@grade(occupancy, "correctness", points=2,
       hint="Which of the four limits (blocks, warps, registers, shared memory) binds first?")
def test_occupancy_worked_examples():
    """A100: 256 threads × 64 regs → 50 %; 32-thread blocks → capped at 32 blocks = 50 %; 48 KB smem → 3 blocks."""
    cases = [((256, 64, 0, "A100-80G"), 0.5), ((256, 32, 0, "A100-80G"), 1.0), ((32, 16, 0, "A100-80G"), 0.5),
             ((256, 32, 48 * 1024, "A100-80G"), 0.375), ((1024, 64, 0, "H100-SXM"), 0.5),
             ((256, 40, 0, "A100-80G"), 0.75), ((128, 255, 0, "H100-SXM"), 0.125)]
    for args, want in cases:
        assert_number(occupancy(*args), want, f"occupancy{args} (expected: {want * 64:g} of 64 warps)")


@grade(occupancy, "correctness", points=2,
       hint="Registers go to a warp in units of 256, shared memory to a block with 1 KB reserved: do you round?")
@given(threads=st.integers(1, 1024), regs=st.integers(1, 255), smem=st.integers(0, 100 * 1024),
       gpu=st.sampled_from(sorted(GPUS)))
@example(threads=96, regs=33, smem=0, gpu="A100-80G")
@example(threads=256, regs=32, smem=40 * 1024 + 1, gpu="H100-SXM")
@example(threads=64, regs=32, smem=57 * 1024, gpu="H100-SXM")
def test_occupancy_any_configuration(threads, regs, smem, gpu):
    """Any launch configuration on every GPU of the shared table, against the grader's calculator."""
    blocks = expected_blocks(threads, regs, smem, gpu)
    want = blocks * -(-threads // 32) / 64
    got = occupancy(threads, regs, smem, gpu)
    what = f"occupancy({threads}, {regs}, {smem}, {gpu!r})"
    assert isinstance(got, float), f"{what} returned {type(got).__name__} {got!r}, expected a float"
    assert_number(got, want, f"{what} (expected: {blocks} blocks per SM)")
    assert_exact(blocks_per_sm(threads, regs, smem, gpu), blocks, f"blocks_per_sm({threads}, {regs}, {smem}, {gpu!r})")


@grade(occupancy, "correctness", points=1, hint="A block that cannot fit on an SM at all has no occupancy: say so.",
       validation=True)
def test_occupancy_rejects_impossible_blocks():
    for args in [(2048, 32, 0, "A100-80G"), (256, 256, 0, "A100-80G"), (256, 32, 164 * 1024, "A100-80G"),
                 (0, 32, 0, "A100-80G"), (256, 32, 0, "V100")]:
        assert_rejects(occupancy, args, None)
