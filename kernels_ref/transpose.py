"""Reference 2-D transpose in Triton: the oracle's twin and the gpu_perf bar for L22.

One program per 64 × 64 tile (fp32: 16 KB in, 16 KB out), loaded along x's rows and stored along
y's rows, so both sides are coalesced and each element crosses HBM twice (read once, write once:
the bandwidth of a copy). Programs are grouped along M (GROUP_M tiles of rows per column band) so
neighbouring programs write neighbouring rows of y and share L2 lines. ``tl.trans`` lets the
compiler route the tile through shared memory with a conflict-free layout. Under the interpreter
(no GPU) it runs the same code on the CPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _transpose_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_xn, stride_ym, stride_yn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    n_pid_m, n_pid_n = tl.cdiv(n_rows, BLOCK_M), tl.cdiv(n_cols, BLOCK_N)
    group = pid // (GROUP_M * n_pid_n)  # grouped order: GROUP_M row tiles walk one column band
    first_m = group * GROUP_M
    size_m = min(n_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % (GROUP_M * n_pid_n)) % size_m
    pid_n = (pid % (GROUP_M * n_pid_n)) // size_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (offs_m[:, None] < n_rows) & (offs_n[None, :] < n_cols)
    tile = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_n[None, :] * stride_xn, mask=mask)  # read M·N
    tl.store(y_ptr + offs_n[:, None] * stride_ym + offs_m[None, :] * stride_yn, tl.trans(tile),
             mask=tl.trans(mask))  # write M·N


def transpose(x: torch.Tensor) -> torch.Tensor:
    """``x.t()`` as a new contiguous tensor (2-D, any strides and dtype)."""
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D, got shape {tuple(x.shape)}")
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    block = 64 if x.element_size() >= 2 else 128
    grid = (triton.cdiv(n_rows, block) * triton.cdiv(n_cols, block),)
    _transpose_kernel[grid](x, y, n_rows, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                            BLOCK_M=block, BLOCK_N=block, GROUP_M=8, num_warps=8)
    return y


def transpose_cu(launch, x: torch.Tensor) -> torch.Tensor:  # launch(kernel, grid, block, args)
    """kernels_ref/transpose.cu's ``transpose_f32`` on a 2-D contiguous fp32 CUDA tensor. ``launch`` runs a
    kernel of the compiled .cu (make bench passes grader.instrument.cuda.launch bound to it)."""
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    launch("transpose_f32", (triton.cdiv(n_cols, 32), triton.cdiv(n_rows, 32)), (32, 8), [x, y, n_rows, n_cols])
    return y


# ---- what this is the reference of: plain data read by make bench and the tests (grader/tools/bench.py) ------


def _bench_inputs(device: str) -> tuple[torch.Tensor]:
    n = 8192 if device == "cuda" else 128  # on the CPU: the engine's dry run, interpreted
    return (torch.randn(n, n, device=device, generator=torch.Generator(device).manual_seed(0)),)


def _transposed(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


REFERENCE = dict(
    unit="l22_memory_coalescing", exercises=("transpose",), vendor="copy",
    bench=(dict(name="transpose", inputs=_bench_inputs, run=transpose, oracle=_transposed, baseline="copy", goal=0.85),
           dict(name="transpose.cu", source="transpose.cu", inputs=_bench_inputs, run=transpose_cu, oracle=_transposed,
                baseline="copy", goal=0.85)),
)
