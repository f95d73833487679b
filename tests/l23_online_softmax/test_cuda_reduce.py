"""L23 · CUDA reductions: block_sum (numba, simulator), block_sum_shfl and softmax_row_stats (CUDA C++).

block_sum runs in numba's CUDA simulator: its result, and its shared-memory traffic traced request
by request (bank conflicts, and how many warp requests the tree takes: sequential addressing keeps
the active threads in as few warps as possible). The .cu kernels are compiled by NVRTC here (the
efficiency tier reads ptxas' report and the PTX); their correctness tests run them on a GPU, or on the
CPU executor where none is lent (grader.instrument.cuda_cpu: g++, the block's threads as fibers, out-of-bounds
accesses, divergent barriers and races reported with the line).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from grader.kit import assert_close, award_speedup, cuda, cuda_kernel, grade, learner, on_device, perf

UNIT = "l23_online_softmax"
block_sum = learner(UNIT, "cuda_reduce", "block_sum", audited=True)  # numba: audited (R3.2)
block_sum_shfl = cuda_kernel(UNIT, "cuda_reduce", "block_sum_shfl")
softmax_row_stats = cuda_kernel(UNIT, "cuda_reduce", "softmax_row_stats")
BLOCK = 128  # the exercise's block size (cuda_reduce.BLOCK)


def values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * rng.choice([1.0, 100.0], n)).astype(np.float32)


def check_sum(x: np.ndarray) -> cuda.SimTraffic:
    got, traffic = cuda.run_sim_kernel("block_sum", block_sum, x)
    exact = math.fsum(x.astype(np.float64))
    # fp32 tree sum: each of the log2(n) levels rounds once, relative to the magnitudes summed
    tol = 4 * np.finfo(np.float32).eps * math.log2(max(x.size, 2)) * float(np.abs(x).astype(np.float64).sum())
    assert got.shape == (1,), f"block_sum(x: {x.size} float32) returned shape {got.shape}, expected (1,)"
    assert abs(float(got[0]) - exact) <= tol, (
        f"block_sum(x: {x.size} float32) = {float(got[0])!r}, expected {exact!r} (±{tol:.3g}): "
        "is every element added exactly once?")
    return traffic


# ---- block_sum (numba, simulator) ---------------------------------------------------------------


@grade(block_sum, "correctness", points=3,
       hint="The last block is partial: what does a thread past the end of x load? And who adds the partials?")
@pytest.mark.parametrize("n", [1, 7, 256, 257, 1000])
def test_block_sum_matches(n):
    """One element, a partial block, exactly one block (2·BLOCK elements), one past it, several blocks."""
    check_sum(values(n, seed=n))


def sequential_requests(block: int) -> int:
    """Warp-level shared-memory requests of one block of the sequential-addressing tree, generously.

    The initial store (block / 32 requests), then at each step s = block/2, ..., 1 the ceil(s / 32)
    warps holding the active threads, allowing up to 4 accesses each (load, load, store, one spare);
    plus thread 0's final read.
    """
    steps = [block >> k for k in range(1, block.bit_length())]
    return block // 32 + sum(4 * math.ceil(s / 32) for s in steps) + 1


@grade(block_sum, "efficiency", points=3,
       hint="At step s, which threads work: every (2s)-th one, or the first s? How many warps is that?")
def test_block_sum_sequential_addressing():
    """1024 elements: x read once, no bank conflict, no more shared-memory warp requests than the sequential tree."""
    x = values(1024, seed=3)
    t = check_sum(x)
    assert t.bytes_loaded <= x.nbytes * (1 + 1 / 64), (
        f"loaded {t.bytes_loaded:,} B for a {x.nbytes:,} B input: read each element of x once ({t.summary()})")
    assert t.max_conflict_degree == 1, (
        f"shared memory: worst request is a {t.max_conflict_degree}-way bank conflict: lanes of a warp should "
        f"touch consecutive words ({t.summary()})")
    budget = sequential_requests(BLOCK) * t.blocks
    assert 0 < t.shared_requests <= budget, (
        f"the reduction tree took {t.shared_requests} shared-memory warp requests over {t.blocks} blocks; "
        f"sequential addressing needs at most {budget}: keep the active threads packed in the first warps "
        f"({t.summary()})")


# ---- CUDA C++ through NVRTC: block_sum_shfl and softmax_row_stats -------------------------------


def compiled(*functions: str) -> cuda.CompiledCu:
    return cuda.compile_learner(UNIT, block_sum_shfl.module, *functions)


def assert_no_spills(c: cuda.CompiledCu, kernel: str) -> None:
    r = c.kernel(kernel)
    assert r.spill_stores == r.spill_loads == 0 and r.stack_bytes == 0, (
        f"{kernel} spills or uses a stack frame (local memory, as slow as HBM): {r.summary()}")


@grade(block_sum_shfl, "efficiency", points=3,
       hint="Which instruction moves a value from lane i + offset to lane i of a warp, without shared memory?")
def test_block_sum_shfl_compiles_to_shuffles():
    """NVRTC sm_90: shfl.sync in the kernel, at most one float of shared memory per warp (128 B), no spills."""
    c = compiled("warp_sum", "block_sum_shfl")
    ptx = c.ptx_of("block_sum_shfl")
    shuffles = cuda.ptx_instructions(ptx, "shfl.sync")
    assert shuffles, "block_sum_shfl: no shfl.sync in the PTX: reduce within each warp with __shfl_down_sync"
    smem = c.kernel("block_sum_shfl").smem_bytes
    assert 0 < smem <= 32 * 4, (
        f"block_sum_shfl uses {smem} B of shared memory; one float per warp (≤ 128 B) is enough once warps "
        "reduce with shuffles" if smem else "block_sum_shfl uses no shared memory: how do the warps combine?")
    assert cuda.ptx_instructions(ptx, "bar.sync"), (
        "block_sum_shfl: no __syncthreads() between the warps' writes and warp 0's reads")
    assert_no_spills(c, "block_sum_shfl")


@grade(softmax_row_stats, "efficiency", points=3,
       hint="Both halves of the state travel: how many values does each shuffle step exchange?")
def test_row_stats_merges_in_registers():
    """NVRTC sm_90: m and d both shuffled (≥ 2 shfl.sync), no shared memory, no spills."""
    c = compiled("warp_merge_md", "softmax_row_stats")
    ptx = c.ptx_of("softmax_row_stats")
    shuffles = cuda.ptx_instructions(ptx, "shfl.sync")
    assert len(shuffles) >= 2, (
        f"softmax_row_stats has {len(shuffles)} shfl.sync in its PTX: shuffle m and d at each step "
        "(__shfl_down_sync on both)")
    smem = c.kernel("softmax_row_stats").smem_bytes
    assert smem == 0, f"softmax_row_stats uses {smem} B of shared memory: one warp merges in registers"
    assert_no_spills(c, "softmax_row_stats")


def _require_gpu_kernels(*functions: str) -> None:
    """A GPU to run on ("pending GPU" without one) and no TODO left in these functions of the .cu."""
    cuda.require_device()
    cuda.load_cu(UNIT, block_sum_shfl.module).require_done(*functions)


def _kernels_device(*functions: str) -> str:
    """Where the correctness tests run the kernels ("cuda", else "cpu": the CPU executor); no TODO left."""
    device = cuda.kernel_device()
    cuda.load_cu(UNIT, block_sum_shfl.module).require_done(*functions)
    return device


def launch_on_device(kernel: str, grid: tuple[int, ...], block: tuple[int, ...], args: list, *, device: str) -> None:
    """Compile the learner's .cu for ``device`` (this GPU, or the CPU executor) and launch ``kernel`` there."""
    source = cuda.load_cu(UNIT, block_sum_shfl.module)
    cuda.run_kernel(source, kernel, grid, block, [a.to(device) if isinstance(a, torch.Tensor) else a for a in args],
                    device=device)


def run_block_sum(n: int, grid: int, block: int, *, device: str) -> torch.Tensor:
    """On the device (on_device): the partial sums of ``values(n, seed=n)``."""
    x = torch.from_numpy(values(n, seed=n)).to(device)
    partials = torch.full((grid,), float("nan"), device=device)
    launch_on_device(block_sum_shfl.kernel, (grid,), (block,), [x, partials, n], device=device)
    return partials


def count_block_sum_banks(*, device: str) -> dict:
    """On the device (on_device): block_sum_shfl's shared-memory bank conflicts per line (one block of 256 threads),
    counted on the CPU executor; shown in the results, not scored."""
    source = cuda.load_cu(UNIT, block_sum_shfl.module)
    x, partials = torch.from_numpy(values(1000, seed=1000)), torch.zeros(1)
    return cuda.bank_conflicts(source, block_sum_shfl.kernel, (1,), (256,), [x, partials, 1000]).as_dict()


@grade(block_sum_shfl, "correctness", points=3,
       hint="Does warp 0 read a warp total that no warp wrote when blockDim.x < 1024?")
@pytest.mark.parametrize("n, grid, block", [(1, 1, 32), (1000, 3, 256), (1 << 20, 120, 1024)])
def test_block_sum_shfl_sums(n, grid, block, award):
    """On a GPU or the CPU executor: the partials add up to the sum (fp64 reference), several grid and block sizes;
    the 1000-element case also records the kernel's shared-memory bank conflicts per line (information only)."""
    device = _kernels_device("warp_sum", "block_sum_shfl")
    partials = on_device(run_block_sum, n, grid, block, device=device)
    x = torch.from_numpy(values(n, seed=n))
    assert partials.shape == (grid,), f"block_sum_shfl: {tuple(partials.shape)} partials, expected {grid}"
    total = partials.double().sum()
    tol = 4 * 2.0**-23 * math.log2(max(n, 2)) * float(x.double().abs().sum())
    exact = float(x.double().sum())
    assert abs(float(total) - exact) <= tol, f"block_sum_shfl: partials sum to {float(total)!r}, expected {exact!r}"
    if n == 1000 and cuda.can_count_banks():
        award(1.0, bank_conflicts=on_device(count_block_sum_banks, device="cpu"))


def row_stats_input(n_cols: int) -> torch.Tensor:
    """4 rows: plain, large logits, half -inf, plain (scaled by 30)."""
    g = torch.Generator().manual_seed(n_cols)
    x = torch.randn(4, n_cols, generator=g) * 30
    x[1] += 1000.0
    x[2, : n_cols // 2] = -torch.inf
    return x


def run_row_stats(n_cols: int, *, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """On the device (on_device): (m, d) of ``row_stats_input(n_cols)``."""
    m, d = torch.empty(4, device=device), torch.empty(4, device=device)
    launch_on_device(softmax_row_stats.kernel, (4,), (32,), [row_stats_input(n_cols), m, d, 4, n_cols], device=device)
    return m, d


def hold_row_stats(n_cols: int, *, device: str) -> None:
    """On the device (on_device): NVRTC's reading of softmax_row_stats, the one the efficiency test grades, must
    compute what the CPU executor's reading computes (cuda.same_kernel)."""
    source = cuda.load_cu(UNIT, block_sum_shfl.module)
    m, d = torch.zeros(4), torch.zeros(4)
    cuda.same_kernel(source, softmax_row_stats.kernel, (4,), (32,), [row_stats_input(n_cols), m, d, 4, n_cols])


@grade(softmax_row_stats, "correctness", points=3,
       hint="A lane that saw only -inf, or no column at all, holds (-inf, 0): what does your merge do with it?")
def test_row_stats_values():
    """On a GPU or the CPU executor: (m, d) of rows of 1, 5, 33, 1000 columns, large logits and -inf, vs fp64; on
    the CPU executor, the kernel NVRTC reads (whose PTX is graded) is held against the one that ran."""
    device = _kernels_device("warp_merge_md", "softmax_row_stats")
    if device == "cpu" and cuda.can_count_banks():
        for n_cols in (1, 5, 33):  # one warp per row: small launches the interpreter runs in milliseconds
            on_device(hold_row_stats, n_cols, device="cpu")
    for n_cols in (1, 5, 33, 1000):
        x = row_stats_input(n_cols)
        m, d = on_device(run_row_stats, n_cols, device=device)
        want_m = x.double().amax(dim=1)
        want_d = torch.exp(x.double() - want_m[:, None]).sum(dim=1)
        assert_close(m, want_m, dtype=torch.float32, what=f"softmax_row_stats m ({n_cols} columns)")
        assert_close(d, want_d, dtype=torch.float32, what=f"softmax_row_stats d ({n_cols} columns)")


def time_block_sum(n: int, *, device: str) -> dict:
    """On the device (on_device): one checked launch's partials, then the timing against torch.sum."""
    compiled = cuda.load_cu(UNIT, block_sum_shfl.module).compile(arch=cuda.device_arch())
    x = torch.from_numpy(values(n, seed=25)).to(device)
    grid = 4 * torch.cuda.get_device_properties(0).multi_processor_count
    partials = torch.empty(grid, device=device)
    launch = lambda: cuda.launch(compiled, block_sum_shfl.kernel, (grid,), (512,), [x, partials, n])
    launch()
    checked = partials.clone()
    return {"partials": checked, "perf": perf.compare({"learner": launch, "torch.sum": lambda: torch.sum(x)}).as_dict()}


@grade(block_sum_shfl, "gpu_perf", points=2,
       hint="Memory-bound: enough blocks to fill every SM, each thread reading many elements.")
def test_block_sum_shfl_speed(award):
    """2²⁵ floats (the lecture's size) against torch.sum: full marks at 0.7× its speed."""
    _require_gpu_kernels("warp_sum", "block_sum_shfl")
    n = 1 << 25
    r = on_device(time_block_sum, n, device="cuda")
    x = torch.from_numpy(values(n, seed=25)).double()
    exact = float(x.sum())
    assert abs(float(r["partials"].double().sum()) - exact) <= 1e-4 * float(x.abs().sum()), "wrong sum"
    award_speedup(award, r["perf"], over="torch.sum", full_at=0.7, label="speedup_vs_torch")
