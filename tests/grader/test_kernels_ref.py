"""kernels_ref/: the tuned reference kernels are right, run by the interpreter on small shapes.

They are the oracles' twins and the gpu_perf bar; here each is held against fp64 torch on shapes
that hit its tails (ragged tiles, EVEN_K/EVEN_N off and on, causal diagonal tiles) and dtypes.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from grader.grading.target import load_reference
from grader.kit.compare import Tolerance, assert_close


@pytest.mark.parametrize("shape, dtype", [((5, 1000), torch.float32), ((3, 4097), torch.float16),
                                          ((2, 65), torch.bfloat16)])
def test_softmax_reference(shape, dtype):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(0)) * 4).to(dtype)
    y = load_reference("softmax").softmax(x)
    assert_close(y, torch.softmax(x.double(), -1), dtype=dtype, what=f"kernels_ref.softmax({tuple(shape)})")


@pytest.mark.parametrize("m, n, k, dtype", [(100, 70, 33, torch.float16), (64, 128, 64, torch.bfloat16),
                                            (1, 3, 200, torch.float16)])
def test_matmul_reference(m, n, k, dtype):
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(m, k, generator=g).to(dtype), torch.randn(n, k, generator=g).to(dtype).t()  # b: a view
    c = load_reference("matmul").matmul(a, b)
    exact = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    eps = 2.0**-10 if dtype == torch.float16 else 2.0**-7
    err = (c.double() - exact).abs()
    assert c.dtype == dtype and (err <= eps * exact.abs() + 4 * math.sqrt(k) * 2.0**-24 * scale + 2.0**-24).all(), (
        f"kernels_ref.matmul({m}×{k} · {k}×{n}, {dtype}): max error {err.max():.3g}"
    )


@pytest.mark.parametrize("b, h, n, d, dtype, causal", [
    (1, 2, 100, 64, torch.float16, False), (2, 1, 96, 32, torch.float32, True), (1, 1, 65, 128, torch.bfloat16, True),
    (1, 1, 64, 16, torch.float32, False),
])
def test_attention_reference(b, h, n, d, dtype, causal):
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(b, h, n, d, generator=g).to(dtype) for _ in range(3))
    o, lse = load_reference("attention").flash_attention_fwd(q, k, v, causal=causal)
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = q64 @ k64.transpose(-1, -2) / math.sqrt(d)
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    eps = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7, torch.float32: 2.0**-20}[dtype]
    what = f"kernels_ref.flash_attention_fwd({b}, {h}, {n}, {d}, {dtype}, causal={causal})"
    o_ref = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
    assert_close(o, o_ref, dtype=dtype, tol=Tolerance(atol=eps * float(v64.abs().max()), rtol=eps), what=what + " o")
    assert_close(lse, torch.logsumexp(s, -1), dtype=torch.float32, tol=Tolerance(atol=1e-5, rtol=1e-6),
                 what=what + " lse")
