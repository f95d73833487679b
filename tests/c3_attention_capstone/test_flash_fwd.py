"""C3 · flash_fwd.cu: the FlashAttention-2-style forward in CUDA C++.

Correctness runs the learner's kernel on a GPU, or on the CPU executor where none is lent
(grader.instrument.cuda_cpu: g++, the block's threads as fibers; out-of-bounds accesses, divergent barriers
and races reported with the line), against fp64 attention computed here. The efficiency tier counts the
shared-memory bank conflicts of the learner's own kernel on the CPU executor (per line and __shared__
array) and asks for conflict-free reads of the K tile, the array named ``Ks``. gpu_perf times it against
torch's scaled_dot_product_attention on a GPU ("pending GPU" elsewhere).
"""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.nn.functional as F

from grader.kit import (
    SubmissionError,
    Tolerance,
    assert_close,
    award_speedup,
    cuda,
    cuda_kernel,
    grade,
    on_device,
    perf,
)

UNIT = "c3_attention_capstone"
flash_fwd = cuda_kernel(UNIT, "flash_fwd", "flash_fwd")
HEAD_DIM = 64
SCALE = 1 / math.sqrt(HEAD_DIM)
K_TILE = "Ks"  # the __shared__ array that holds the K tile (the README's naming rule)
# fp32 dots of 64 terms, fp32 exponentials and the online rescales: a few ulps of the row's magnitudes
FLASH_TOL = Tolerance(atol=2e-5, rtol=2e-5)


def launch_shape(text: str) -> tuple[int, int]:
    """(BLOCK_M, NUM_THREADS) from the learner's ``#define`` lines: the launch's grid.x divisor and block."""
    got = {}
    for name in ("BLOCK_M", "NUM_THREADS"):
        m = re.search(rf"^\s*#define\s+{name}\s+\(?(\d+)\)?", text, flags=re.M)
        if m is None:
            raise SubmissionError(f"flash_fwd.cu: keep the `#define {name} <int>` line (the tests launch with it)")
        got[name] = int(m.group(1))
    block_m, threads = got["BLOCK_M"], got["NUM_THREADS"]
    if not (1 <= block_m <= 128 and 32 <= threads <= 1024 and threads % 32 == 0):
        raise SubmissionError(f"flash_fwd.cu: BLOCK_M = {block_m} (1 to 128) and NUM_THREADS = {threads} "
                              "(a multiple of 32, at most 1024)")
    return block_m, threads


def qkv(bh: int, n: int, seed: int, *, spread: float = 1.0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(bh, n, HEAD_DIM, generator=g) * s for s in (spread, spread, 1.0))


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """fp64 attention: (O, L = logsumexp of the scaled, masked scores)."""
    n = q.shape[1]
    s = q.double() @ k.double().transpose(-1, -2) * SCALE
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return torch.softmax(s, dim=-1) @ v.double(), torch.logsumexp(s, dim=-1)


def _kernel_device() -> str:
    device = cuda.kernel_device()
    cuda.load_cu(UNIT, flash_fwd.module).require_done(flash_fwd.kernel)
    return device


def run_flash(bh: int, n: int, causal: bool, seed: int, spread: float, *, device: str) -> dict:
    """On the device (on_device): O and L of the learner's kernel (a GPU, or the CPU executor)."""
    source = cuda.load_cu(UNIT, flash_fwd.module)
    block_m, threads = launch_shape(source.text)
    q, k, v = (t.to(device) for t in qkv(bh, n, seed, spread=spread))
    o = torch.full((bh, n, HEAD_DIM), float("nan"), device=device)
    lse = torch.full((bh, n), float("nan"), device=device)
    cuda.run_kernel(source, flash_fwd.kernel, (math.ceil(n / block_m), bh), (threads,),
                    [q, k, v, o, lse, n, SCALE, int(causal)], device=device)
    return {"o": o, "lse": lse}


def check_flash(bh: int, n: int, causal: bool, seed: int, spread: float = 1.0) -> None:
    device = _kernel_device()
    got = on_device(run_flash, bh, n, causal, seed, spread, device=device)
    o_ref, lse_ref = reference(*qkv(bh, n, seed, spread=spread), causal)
    what = f"flash_fwd(batch·heads = {bh}, n = {n}, d = {HEAD_DIM}, causal = {causal})"
    assert_close(got["o"], o_ref, dtype=torch.float32, tol=FLASH_TOL, what=f"{what}: O")
    lse_tol = Tolerance(atol=2e-5 * max(1.0, spread * spread), rtol=2e-5)
    assert_close(got["lse"], lse_ref, dtype=torch.float32, tol=lse_tol, what=f"{what}: L (log-sum-exp)")


@grade(flash_fwd, "correctness", points=2,
       hint="n = 100 is not a multiple of your tiles: what do the keys past n add to a row's sum, and what does a "
            "later tile with a larger maximum do to what you accumulated?")
@pytest.mark.parametrize("bh, n", [(1, 1), (2, 100)])
def test_flash_fwd_matches(bh, n):
    """Non-causal, one key and a ragged last tile: O and L equal fp64 attention."""
    check_flash(bh, n, causal=False, seed=n)


@grade(flash_fwd, "correctness", points=2,
       hint="Which keys may query i see, and which K/V tiles can a block of queries skip entirely?")
@pytest.mark.parametrize("bh, n", [(1, 37), (2, 100)])
def test_flash_fwd_causal(bh, n):
    """Causal (key j ≤ query i), ragged tiles: O and L equal fp64 attention."""
    check_flash(bh, n, causal=True, seed=n + 1)


@grade(flash_fwd, "correctness", points=2,
       hint="Scores near 50: e^50 overflows nothing in fp32, but e^100 would. Which maximum do you subtract?")
def test_flash_fwd_large_scores():
    """Scores in the tens (Q and K scaled by 3): the running maximum keeps every exponent ≤ 0."""
    check_flash(1, 70, causal=False, seed=7, spread=3.0)


def count_banks(n: int, *, device: str) -> dict:
    """On the device (on_device): the learner's kernel on one block, its bank conflicts per line (plain data)."""
    source = cuda.load_cu(UNIT, flash_fwd.module)
    _, threads = launch_shape(source.text)
    q, k, v = qkv(1, n, seed=5)
    o, lse = torch.zeros(1, n, HEAD_DIM), torch.zeros(1, n)
    return cuda.bank_conflicts(source, flash_fwd.kernel, (1, 1), (threads,), [q, k, v, o, lse, n, SCALE, 0]).as_dict()


@grade(flash_fwd, "efficiency", points=4,
       hint="32 lanes read Ks[j][c] for 32 consecutive keys j: how many words apart are they, and which bank "
            "does each land in? What does one extra word per row change?")
def test_flash_fwd_k_tile_reads_conflict_free(award):
    """One block, two K/V tiles (n = 128): every warp request reading `Ks` is conflict-free (degree 1); the
    count of every line goes to the results."""
    cuda.load_cu(UNIT, flash_fwd.module).require_done(flash_fwd.kernel)
    counted = on_device(count_banks, 128, device="cpu")
    banks = cuda.bank_report(counted)
    reads = banks.touching(K_TILE, "read")
    assert reads, (f"flash_fwd never reads a __shared__ array named `{K_TILE}`: stage each K tile there "
                   f"({banks.summary()})")
    bad = [c for c in reads if c.degree > 1]
    assert not bad, (
        f"flash_fwd's reads of the K tile `{K_TILE}` conflict: " + "; ".join(c.describe() for c in bad)
        + f". Pad each row (or swizzle the columns) so that lanes on consecutive keys hit different banks.\n"
        f"{banks.summary()}")
    award(1.0, bank_conflicts=counted)


def time_flash(bh: int, n: int, *, device: str) -> dict:
    """On the device (on_device): one checked launch, then the timing against scaled_dot_product_attention and
    kernels_ref (on a GPU; the dry run launches on the CPU executor at a small size, never scored)."""
    source = cuda.load_cu(UNIT, flash_fwd.module)
    block_m, threads = launch_shape(source.text)
    g = torch.Generator(device).manual_seed(11)
    q, k, v = (torch.randn(bh, n, HEAD_DIM, device=device, generator=g) for _ in range(3))
    o, lse = torch.full_like(q, float("nan")), torch.empty(bh, n, device=device)
    args, grid = [q, k, v, o, lse, n, SCALE, 0], (math.ceil(n / block_m), bh)
    if device == "cuda":
        compiled = source.compile(arch=cuda.device_arch())
        launch = lambda: cuda.launch(compiled, flash_fwd.kernel, grid, (threads,), args)
    else:
        launch = lambda: cuda.run_kernel(source, flash_fwd.kernel, grid, (threads,), args, device="cpu")
    launch()
    rows = slice(0, 64)
    checked = {"o": o[:1, rows].clone(), "q": q[:1, rows].clone(), "k": k[:1].clone(), "v": v[:1].clone()}
    candidates = {"learner": launch, "sdpa": lambda: F.scaled_dot_product_attention(q[None], k[None], v[None])}
    ref = perf.reference("flash_fwd")
    if ref is not None:
        candidates["kernels_ref"] = lambda: ref.flash_fwd(q, k, v)
    return {**checked, "perf": perf.compare(candidates, device=device).as_dict()}


@grade(flash_fwd, "gpu_perf", points=3,
       hint="fp32 on CUDA cores: keep Q in registers or shared memory once, and reuse each K/V tile for many rows.")
def test_flash_fwd_speed(award):
    """32 heads × 4096 tokens, d = 64, fp32: against scaled_dot_product_attention (full marks at 0.25× its speed)."""
    cuda.load_cu(UNIT, flash_fwd.module).require_done(flash_fwd.kernel)
    r = on_device(time_flash, perf.size(32, 1), perf.size(4096, 70), device=perf.device())
    s = r["q"].double() @ r["k"].double().transpose(-1, -2) * SCALE
    want = torch.softmax(s, dim=-1) @ r["v"].double()
    assert_close(r["o"], want, dtype=torch.float32, tol=Tolerance(atol=1e-4, rtol=1e-4),
                 what="flash_fwd: O of the first rows of the timed launch")
    award_speedup(award, r["perf"], over="sdpa", full_at=0.25, label="speedup_vs_sdpa")
