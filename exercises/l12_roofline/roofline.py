"""L12 · The roofline: ridge point, attainable FLOP/s, GEMM arithmetic intensity, shared-memory banks.

Lecture 12 (02_GPU硬件与集群互联/12_GPU执行与存储体系_SM_Warp_TensorCore_HBM_Roofline.md) explains why
"GPU util 100 %" can mean 16 % MFU: a kernel is capped either by the math units or by HBM.

    attainable(I) = min(peak_flops, mem_bw · I)       I = FLOPs / bytes moved (FLOP/B)
    ridge point   = peak_flops / mem_bw                below it: memory-bound; above: compute-bound

A GEMM C[m×n] = A[m×k] · B[k×n] does 2mkn FLOPs (one multiply and one add per term) and, at best,
reads A and B once and writes C once: elem_bytes · (mk + kn + mn) bytes.

Shared memory has 32 banks of 4-byte words; word w lives in bank w mod 32. A warp whose 32 threads
read words at a fixed stride s (thread t reads word t·s) hits gcd(s, 32) words in the same bank:
that many serialized accesses (1 = conflict-free). Stride 0 is a broadcast (one word): degree 1.

Units: FLOP/s and bytes/s as floats, FLOP/B as float. Invalid arguments raise ValueError naming
the argument.
"""

from __future__ import annotations

import math

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

N_BANKS = 32  # shared-memory banks per SM, 4-byte words (all NVIDIA GPUs since Kepler)


def _check_positive(name: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return float(value)


def ridge_point(peak_flops: float, mem_bw: float) -> float:
    """Arithmetic intensity (FLOP/B) where the roofline bends: peak_flops / mem_bw.

    H100 SXM (989 TFLOP/s, 3.35 TB/s): 295.2. A100 at 2.039 TB/s: 153.0 (at the course's 2.0: 156).
    """
    # TODO: validate, then divide.
    raise NotImplementedError('TODO: validate, then divide.')


def attainable_flops(intensity: float, peak_flops: float, mem_bw: float) -> float:
    """FLOP/s a kernel of arithmetic intensity ``intensity`` can reach: min(peak, bw · I).

    RMSNorm (I = 0.5) on H100: 1.675e12 FLOP/s, 0.17 % of peak.
    """
    # TODO: validate, then take the lower of the two roofs.
    raise NotImplementedError('TODO: validate, then take the lower of the two roofs.')


def gemm_intensity(m: int, k: int, n: int, elem_bytes: int) -> float:
    """FLOP/B of an (m×k)·(k×n) GEMM reading A and B once and writing C once.

    2mkn / (elem_bytes · (mk + kn + mn)). 4096³ in fp16: 1365.33. A GEMV (m = 1) in fp16: ~1.
    """
    # TODO: validate, then count FLOPs and bytes moved.
    raise NotImplementedError('TODO: validate, then count FLOPs and bytes moved.')


def bank_conflict_degree(stride_words: int) -> int:
    """Serialized accesses when thread t of a warp reads 4-byte word t·stride_words of shared memory.

    gcd(stride, 32); stride 0 (every thread reads the same word) is a broadcast: 1. Stride 32 (a
    column of ``float tile[32][32]``) → 32; stride 33 (the padded ``tile[32][33]``) → 1.
    """
    # TODO: validate (an int >= 0), then count the threads that land in the busiest bank.
    raise NotImplementedError('TODO: validate (an int >= 0), then count the threads that land in the busiest bank.')
