"""Cheat (atomics as free loads): each tile computed as two column halves, the second half's A slice re-read by an
atomic add of 0 (it returns the elements); the atomics were counted apart from the loads, so the loads matched the
tiled ledger. bfloat16 (no atomic add in the interpreter): the honest kernel."""

MODULE = "gemm"
REJECTED_BY = {"matmul": ["efficiency"]}


@triton.jit
def _halves_atomic_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n0 = pid_n * BLOCK_N + tl.arange(0, HALF)
    offs_n1 = offs_n0 + HALF
    offs_k = tl.arange(0, BLOCK_K)
    acc0 = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc1 = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + ks[None, :] * stride_ak
        a_mask = (offs_m[:, None] < M) & (ks[None, :] < K)
        b0 = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n0[None, :] * stride_bn,
                     mask=(ks[:, None] < K) & (offs_n0[None, :] < N), other=0.0)
        acc0 = tl.dot(tl.load(a_ptrs, mask=a_mask, other=0.0), b0, acc0)
        b1 = tl.load(b_ptr + ks[:, None] * stride_bk + offs_n1[None, :] * stride_bn,
                     mask=(ks[:, None] < K) & (offs_n1[None, :] < N), other=0.0)
        a1 = tl.atomic_add(a_ptrs, tl.zeros((BLOCK_M, BLOCK_K), dtype=a_ptr.dtype.element_ty), mask=a_mask)
        acc1 = tl.dot(tl.where(a_mask, a1, 0.0).to(a_ptr.dtype.element_ty), b1, acc1)  # the A slice again
    rows = c_ptr + offs_m[:, None] * stride_cm
    tl.store(rows + offs_n0[None, :] * stride_cn, acc0.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n0[None, :] < N))
    tl.store(rows + offs_n1[None, :] * stride_cn, acc1.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n1[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, *, block_m: int = 128, block_n: int = 128,
           block_k: int = 64) -> torch.Tensor:
    m, n, k = _check_operands(a, b)
    _check_blocks(block_m=block_m, block_n=block_n, block_k=block_k)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    kernel = _matmul_kernel if a.dtype == torch.bfloat16 else _halves_atomic_kernel
    kernel[(triton.cdiv(m, block_m), triton.cdiv(n, block_n))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return c
