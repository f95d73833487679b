"""L22 · Three ledgers of the CUDA memory hierarchy: sectors per warp, bank conflicts, occupancy.

Lecture 22 (03_CUDA与算子性能优化/22_CUDA编程模型与内存层次_Thread_Block_Coalescing.md) explains
why the same bytes can cost 32× more depending on *how* a warp asks for them:

* Global memory moves 32-byte **sectors** (four to a 128-byte line). A warp of 32 threads reading
  4-byte elements at stride s touches 4 sectors when s = 1 (every byte used), 8 when s = 2, 16 when
  s = 4 and 32 once s >= 8 (one sector per thread, 1/8 of each used).
* Shared memory has 32 **banks** of 4-byte words, bank = word mod 32. Threads of a warp that hit
  different words of one bank are served one after another: the conflict degree. Thread t reading
  word t·s gives gcd(s, 32)-way conflicts; the same word read by many threads is a broadcast (free).
* **Occupancy** = warps resident on an SM / the SM's maximum. A block stays only where all its
  resources fit: threads (warps), registers (allocated per warp in units of 256), shared memory
  (per block, in units of 128 B plus 1 KB the runtime reserves) and the block-count limit.

Conventions: a warp is 32 threads; addresses start at an aligned base (cudaMalloc aligns to 256 B);
hardware limits come from ``grader.constants.GPUS``.
"""

from __future__ import annotations

import math

from grader.constants import GPU, GPUS

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

WARP_SIZE = 32
SECTOR_BYTES = 32
BANK_BYTES = 4


def warp_sectors(stride_elems: int, elem_bytes: int = 4) -> int:
    """Distinct 32-byte sectors one warp touches when thread t reads element ``t * stride_elems``.

    Each element is ``elem_bytes`` wide (it may span several sectors: a 16-byte float4 at stride 1
    covers 16 sectors). Stride 0 is a broadcast: all threads read one element.
    fp32: stride 1 → 4, 2 → 8, 4 → 16, ≥ 8 → 32. Invalid arguments raise ValueError.
    """
    # TODO: collect the sectors every thread's bytes fall into and count the distinct ones.
    ### BEGIN SOLUTION
    stride_elems = check_int("stride_elems", stride_elems, 0)
    elem_bytes = check_int("elem_bytes", elem_bytes, 1)
    sectors = set()
    for t in range(WARP_SIZE):
        first_byte = t * stride_elems * elem_bytes
        last_byte = first_byte + elem_bytes - 1
        sectors.update(range(first_byte // SECTOR_BYTES, last_byte // SECTOR_BYTES + 1))
    return len(sectors)
    ### END SOLUTION


def bank_conflict_degree(stride_words: int, n_banks: int = 32) -> int:
    """How many accesses one bank serves in turn when thread t of a warp reads 4-byte word ``t * stride_words``.

    Bank = word mod ``n_banks``; two threads on the same word are a broadcast and cost nothing extra.
    With 32 banks this is gcd(stride, 32): stride 1 → 1, 2 → 2, 32 → 32, 33 → 1; stride 0 → 1.
    """
    # TODO: count the distinct words each bank must serve; the worst bank sets the degree.
    ### BEGIN SOLUTION
    stride_words = check_int("stride_words", stride_words, 0)
    n_banks = check_int("n_banks", n_banks, 1)
    if stride_words == 0:
        return 1  # every thread reads word 0: a broadcast
    # Threads t and t' share a bank iff (t - t')·s ≡ 0 (mod n_banks), i.e. t ≡ t' (mod n_banks / g):
    # the warp's 32 distinct words fall into classes of period n_banks / g, each one bank.
    period = n_banks // math.gcd(stride_words, n_banks)
    return math.ceil(WARP_SIZE / period)
    ### END SOLUTION


def _gpu(gpu: str | GPU) -> GPU:
    if isinstance(gpu, GPU):
        return gpu
    if gpu not in GPUS:
        raise ValueError(f"gpu must be one of {sorted(GPUS)} (grader.constants.GPUS), got {gpu!r}")
    return GPUS[gpu]


def blocks_per_sm(threads_per_block: int, regs_per_thread: int, smem_per_block: int, gpu: str | GPU) -> int:
    """Blocks of this kernel one SM holds at once: the tightest of the four limits (see the module docstring)."""
    # TODO: validate, then take the minimum of the block, warp, register and shared-memory limits.
    ### BEGIN SOLUTION
    g = _gpu(gpu)
    threads = check_int("threads_per_block", threads_per_block, 1)
    regs = check_int("regs_per_thread", regs_per_thread, 1)
    smem = check_int("smem_per_block", smem_per_block, 0)
    if threads > g.max_threads_per_block:
        raise ValueError(f"threads_per_block {threads} exceeds {g.name}'s limit of {g.max_threads_per_block}")
    if regs > g.max_regs_per_thread:
        raise ValueError(f"regs_per_thread {regs} exceeds {g.name}'s limit of {g.max_regs_per_thread}")
    warps = math.ceil(threads / WARP_SIZE)  # a partial warp still occupies a whole warp slot
    by_blocks = g.max_blocks_per_sm
    by_warps = (g.max_threads_per_sm // WARP_SIZE) // warps
    regs_per_warp = math.ceil(regs * WARP_SIZE / g.reg_alloc_unit) * g.reg_alloc_unit
    by_regs = (g.registers_per_sm // regs_per_warp) // warps
    smem_alloc = math.ceil(smem / g.smem_alloc_unit) * g.smem_alloc_unit + g.smem_reserved_per_block
    if smem_alloc > g.smem_per_sm:
        raise ValueError(f"smem_per_block {smem} B does not fit in {g.name}'s {g.smem_per_sm} B of shared memory "
                         f"per SM ({g.smem_reserved_per_block} B are reserved per block)")
    by_smem = g.smem_per_sm // smem_alloc
    return min(by_blocks, by_warps, by_regs, by_smem)
    ### END SOLUTION


def occupancy(threads_per_block: int, regs_per_thread: int, smem_per_block: int, gpu: str | GPU) -> float:
    """Resident warps / the SM's maximum warps, for a kernel's launch configuration on ``gpu``.

    ``gpu`` is a key of ``grader.constants.GPUS`` ("A100-80G", "H100-SXM", ...). A100, 256 threads,
    64 registers, no shared memory → 4 blocks = 32 of 64 warps → 0.5. A block that cannot fit on an
    SM at all (too many threads, registers or bytes of shared memory) raises ValueError.
    """
    # TODO: resident warps = blocks per SM × warps per block; divide by the SM's maximum warps.
    ### BEGIN SOLUTION
    g = _gpu(gpu)
    blocks = blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, g)
    warps = blocks * math.ceil(threads_per_block / WARP_SIZE)
    return warps / (g.max_threads_per_sm // WARP_SIZE)
    ### END SOLUTION
