"""L02 · The math under AI infra: strides, GEMM FLOPs and bytes, backward FLOPs, global loss, LoRA.

Lecture 02 (01_性能工程与系统前置/02_AI_Infra数学基础.md).

Strides. A tensor is one flat buffer plus a shape and strides: element (i_0, …, i_{n-1}) lives at
offset Σ i_k · stride_k. A contiguous (row-major) tensor has stride_{n-1} = 1 and
stride_k = stride_{k+1} · max(size_{k+1}, 1) (PyTorch treats a size-0 dim as size 1 here).

GEMM. C[M×N] = A[M×K] · B[K×N]: M·N dot products of length K, one multiply and one add each:
2MKN FLOPs. Reading A and B and writing C once moves elem_bytes · (MK + KN + MN) bytes.

Linear layer backward. Y = X·W with X [T×d_in], W [d_in×d_out], upstream gradient G = dL/dY:
dX = G·Wᵀ and dW = Xᵀ·G are two more GEMMs of the same size as the forward: backward = 2 × forward.

Global mean loss. With data parallelism each rank averages its own tokens; the global mean weights
each rank by its token count, Σ n_r·mean_r / Σ n_r, not the mean of the means.

LoRA. W₀ + (α/r)·B·A with B [d_out×r] and A [r×d_in] trains r·(d_in + d_out) parameters.

Units. Decimal prefixes for sizes on the wire and on disks (1 GB = 10⁹ B), binary ones for memory
(1 GiB = 2³⁰ B), and a lower-case b for bits: a 400 Gb/s NIC moves 50 GB/s. 40 GiB of KV cache is
42 949 672 960 B, which is 42.95 GB, not "40 GB" and not "41.94 GB".

Sizes are exact ints. Invalid arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

GEMM_PARTS = ("flops", "read_a", "read_b", "write_c", "bytes")
LINEAR_PARTS = ("forward", "backward_input", "backward_weight", "total")
UNITS = ("B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "Kb", "Mb", "Gb", "Tb")


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a contiguous tensor of ``shape`` (what ``torch.empty`` gives).

    (2, 3) → (3, 1); (2, 2048, 4096) → (8 388 608, 4096, 1); () → (). Sizes may be 0.
    """
    # TODO: validate the sizes, then build the strides from the last dimension backwards.
    ### BEGIN SOLUTION
    sizes = [check_int(f"shape[{i}]", s, minimum=0) for i, s in enumerate(shape)]
    strides = [1] * len(sizes)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * max(sizes[k + 1], 1)
    return tuple(strides)
    ### END SOLUTION


def gemm_ledger(m: int, k: int, n: int, elem_bytes: int = 2) -> dict[str, int]:
    """FLOPs and bytes of C[m×n] = A[m×k]·B[k×n], by part: keys ``GEMM_PARTS``.

    "flops" 2mkn; "read_a" mk·elem_bytes; "read_b" kn·elem_bytes; "write_c" mn·elem_bytes; "bytes"
    their sum. M = K = 4096, N = 16 384, fp16: 549 755 813 888 FLOPs, 301 989 888 B.
    """
    # TODO: validate, then count FLOPs and each tensor's bytes.
    ### BEGIN SOLUTION
    m, k, n = check_int("m", m, minimum=1), check_int("k", k, minimum=1), check_int("n", n, minimum=1)
    elem_bytes = check_int("elem_bytes", elem_bytes, minimum=1)
    parts = {"read_a": m * k * elem_bytes, "read_b": k * n * elem_bytes, "write_c": m * n * elem_bytes}
    return {"flops": 2 * m * k * n, **parts, "bytes": sum(parts.values())}
    ### END SOLUTION


def linear_train_flops(n_tokens: int, d_in: int, d_out: int) -> dict[str, int]:
    """FLOPs of one bias-free linear layer on ``n_tokens`` rows, forward and backward: keys ``LINEAR_PARTS``.

    "forward" (X·W), "backward_input" (dX = G·Wᵀ), "backward_weight" (dW = Xᵀ·G), "total".
    B = 8, S = 2048 (n_tokens 16 384), W 4096 × 16 384: forward 2.199e12, backward 4.398e12.
    """
    # TODO: validate, then count the three GEMMs.
    ### BEGIN SOLUTION
    t, d_in, d_out = (check_int(n, v, minimum=1) for n, v in (("n_tokens", n_tokens), ("d_in", d_in), ("d_out", d_out)))
    parts = {
        "forward": 2 * t * d_in * d_out,  # [T×d_in]·[d_in×d_out]
        "backward_input": 2 * t * d_out * d_in,  # [T×d_out]·[d_out×d_in]
        "backward_weight": 2 * d_in * t * d_out,  # [d_in×T]·[T×d_out]
    }
    return {**parts, "total": sum(parts.values())}
    ### END SOLUTION


def global_mean_loss(per_rank: Sequence[tuple[int, float]]) -> float:
    """Token-weighted mean loss over ranks, from ``(n_tokens, mean_loss)`` pairs.

    [(7, 2.0), (5, 3.0)] → 29/12 = 2.41667 (not 2.5). Ranks with 0 tokens count for nothing; at
    least one token overall is required.
    """
    # TODO: validate, then weight each rank's mean by its tokens.
    ### BEGIN SOLUTION
    total_tokens, weighted = 0, []
    for r, (n_tokens, mean) in enumerate(per_rank):
        total_tokens += check_int(f"per_rank[{r}] n_tokens", n_tokens, minimum=0)
        if isinstance(mean, bool) or not isinstance(mean, int | float) or not math.isfinite(mean):
            raise ValueError(f"per_rank[{r}] mean_loss must be a finite number, got {mean!r}")
        weighted.append(n_tokens * mean)
    if total_tokens == 0:
        raise ValueError("per_rank must hold at least one token in total")
    return math.fsum(weighted) / total_tokens
    ### END SOLUTION


def lora_params(d_in: int, d_out: int, rank: int) -> int:
    """Trainable parameters of a LoRA adapter on a d_in → d_out weight: rank · (d_in + d_out).

    d_in = d_out = 4096, rank 16: 131 072 (0.78 % of the 16 777 216 frozen weights).
    """
    # TODO: validate (1 <= rank <= min(d_in, d_out)), then count A and B.
    ### BEGIN SOLUTION
    d_in, d_out, r = (check_int(n, v, minimum=1) for n, v in (("d_in", d_in), ("d_out", d_out), ("rank", rank)))
    if r > min(d_in, d_out):
        raise ValueError(f"rank must be <= min(d_in, d_out) = {min(d_in, d_out)}, got {r}")
    return r * d_in + d_out * r  # A: r×d_in, B: d_out×r
    ### END SOLUTION


def to_bytes(amount: int | float, unit: str) -> int:
    """``amount`` of ``unit`` (one of ``UNITS``, case-sensitive) as an exact int number of bytes.

    "GB" is 10⁹ B, "GiB" 2³⁰ B, "Gb" 10⁹ bits = 1.25·10⁸ B. Floats are read as written (0.1 is one
    tenth): 400 Gb → 50 000 000 000; 1.5 GiB → 1 610 612 736. An amount that is negative, not
    finite, or not a whole number of bytes (0.3 B, 1 Kb = 125 B but 0.001 Kb is not) raises
    ValueError naming ``amount``; an unknown unit raises one naming ``unit``.
    """
    # TODO: look the unit up (decimal, binary, bits), then convert exactly.
    ### BEGIN SOLUTION
    decimal = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
    binary = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    bits = {"Kb": Fraction(10**3, 8), "Mb": Fraction(10**6, 8), "Gb": Fraction(10**9, 8), "Tb": Fraction(10**12, 8)}
    factor = {**decimal, **binary, **bits}.get(unit)
    if factor is None:
        raise ValueError(f"unit must be one of {UNITS} (case matters: Gb is bits), got {unit!r}")
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount) or amount < 0:
        raise ValueError(f"amount must be a finite number >= 0, got {amount!r}")
    exact = (Fraction(amount) if isinstance(amount, int) else Fraction(repr(amount))) * factor
    if exact.denominator != 1:
        raise ValueError(f"amount {amount!r} {unit} is not a whole number of bytes ({float(exact)} B)")
    return int(exact)
    ### END SOLUTION
