"""Reference for the C3 capstone's flash_fwd: L25's tuned FlashAttention-2 forward (kernels_ref/attention.py) on
the exercise's layout, ``[batch·heads, n, d]`` (any leading dimensions: they become the heads).

Returns (o, lse) as flash_fwd writes them: o in q's dtype, lse fp32 in natural log, shape (..., n).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def flash_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> tuple[torch.Tensor,
                                                                                               torch.Tensor]:
    from grader.instrument import device

    attention = device.reference("attention")  # compiled for the GPU, interpreted in the dry run, as this module
    lead, (n, d) = q.shape[:-2], q.shape[-2:]
    four = [t.reshape(1, -1, n, d) for t in (q, k, v)]
    o, lse = attention.flash_attention_fwd(*four, causal=causal)
    return o.reshape(*lead, n, d), lse.reshape(*lead, n)


# ---- what this is the reference of: plain data read by make bench and the tests (grader/tools/bench.py) ------


def _bench_inputs(device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # bf16 for the SDPA flash baseline (it has no fp32 kernel); the capstone's gpu_perf test times fp32
    shape = (1, 32, 4096, 64) if device == "cuda" else (1, 2, 64, 64)
    g = torch.Generator(device).manual_seed(0)
    return tuple(torch.randn(shape, device=device, generator=g).to(torch.bfloat16) for _ in range(3))


def _flops(q: torch.Tensor, *_: torch.Tensor) -> float:
    return 4 * q.numel() // q.shape[-1] * q.shape[-2] * q.shape[-1]


REFERENCE = dict(
    unit="c3_attention_capstone", exercises=("flash_fwd",), vendor="sdpa",
    bench=(dict(name="flash_fwd", inputs=_bench_inputs, run=flash_fwd, oracle=F.scaled_dot_product_attention,
                baseline="sdpa_flash", goal=0.8, rtol=2e-2, atol=2e-2, flops=_flops),),
)
