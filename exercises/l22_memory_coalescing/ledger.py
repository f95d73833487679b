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
    raise NotImplementedError("TODO: collect the sectors every thread's bytes fall into and count the distinct ones.")


def bank_conflict_degree(stride_words: int, n_banks: int = 32) -> int:
    """How many accesses one bank serves in turn when thread t of a warp reads 4-byte word ``t * stride_words``.

    Bank = word mod ``n_banks``; two threads on the same word are a broadcast and cost nothing extra.
    With 32 banks this is gcd(stride, 32): stride 1 → 1, 2 → 2, 32 → 32, 33 → 1; stride 0 → 1.
    """
    # TODO: count the distinct words each bank must serve; the worst bank sets the degree.
    raise NotImplementedError('TODO: count the distinct words each bank must serve; the worst bank sets the degree.')


def _gpu(gpu: str | GPU) -> GPU:
    if isinstance(gpu, GPU):
        return gpu
    if gpu not in GPUS:
        raise ValueError(f"gpu must be one of {sorted(GPUS)} (grader.constants.GPUS), got {gpu!r}")
    return GPUS[gpu]


def blocks_per_sm(threads_per_block: int, regs_per_thread: int, smem_per_block: int, gpu: str | GPU) -> int:
    """Blocks of this kernel one SM holds at once: the tightest of the four limits (see the module docstring)."""
    # TODO: validate, then take the minimum of the block, warp, register and shared-memory limits.
    raise NotImplementedError('TODO: validate, then take the minimum of the block, warp, register and shared-memory limits.')


def occupancy(threads_per_block: int, regs_per_thread: int, smem_per_block: int, gpu: str | GPU) -> float:
    """Resident warps / the SM's maximum warps, for a kernel's launch configuration on ``gpu``.

    ``gpu`` is a key of ``grader.constants.GPUS`` ("A100-80G", "H100-SXM", ...). A100, 256 threads,
    64 registers, no shared memory → 4 blocks = 32 of 64 warps → 0.5. A block that cannot fit on an
    SM at all (too many threads, registers or bytes of shared memory) raises ValueError.
    """
    # TODO: resident warps = blocks per SM × warps per block; divide by the SM's maximum warps.
    raise NotImplementedError("TODO: resident warps = blocks per SM × warps per block; divide by the SM's maximum warps.")
