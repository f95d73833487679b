"""Reference row softmax in Triton: the oracle's twin and the gpu_perf bar for L23.

Persistent kernel: a grid of at most (SMs × programs per SM) programs, each striding over rows, so
launch and tail effects vanish for tall inputs; the whole row lives in registers (read x once,
write y once: the "fused" ledger, 2·N·b bytes per row). num_warps grows with the row so each thread
holds at most ~16-32 elements. Under the interpreter (no GPU) it runs the same code on the CPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_xm, stride_ym, BLOCK_N: tl.constexpr):
    pid, n_programs = tl.program_id(0), tl.num_programs(0)
    offs_n = tl.arange(0, BLOCK_N)
    mask = offs_n < n_cols
    for row in tl.range(pid, n_rows, n_programs):
        row64 = tl.cast(row, tl.int64)  # a plain int under the interpreter, a tensor when compiled
        x = tl.load(x_ptr + row64 * stride_xm + offs_n, mask=mask, other=-float("inf")).to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))  # read N elements
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row64 * stride_ym + offs_n, y.to(y_ptr.dtype.element_ty), mask=mask)  # write N


def _grid_size(n_rows: int, num_warps: int, device: torch.device) -> int:
    if device.type != "cuda":
        return min(n_rows, 4)
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    return min(n_rows, sms * max(1, 32 // num_warps))  # 2048 threads per SM / (32 · num_warps)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Row softmax of a 2-D tensor with unit column stride (up to 65536 columns)."""
    if x.dim() != 2 or x.stride(1) != 1:
        x = x.reshape(-1, x.shape[-1]).contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    block_n = triton.next_power_of_2(n_cols)
    num_warps = 4 if block_n <= 2048 else 8 if block_n <= 8192 else 16
    grid = (_grid_size(n_rows, num_warps, x.device),)
    _softmax_kernel[grid](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK_N=block_n, num_warps=num_warps)
    return y


# ---- what this is the reference of: plain data read by make bench and the tests (grader/tools/bench.py) ------


def _bench_inputs(device: str) -> tuple[torch.Tensor]:
    n = 8192 if device == "cuda" else 64  # on the CPU: the engine's dry run, interpreted
    return (torch.randn(n, n, device=device, generator=torch.Generator(device).manual_seed(0)),)


REFERENCE = dict(
    unit="l23_online_softmax", exercises=("softmax_fused", "softmax_online"), vendor="torch.softmax",
    bench=(dict(name="softmax", inputs=_bench_inputs, run=softmax, oracle=lambda x: torch.softmax(x, dim=-1),
                baseline="copy", goal=0.85, rtol=1e-5, atol=1e-6),),
)
