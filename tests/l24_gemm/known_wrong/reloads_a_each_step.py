"""Correct but wasteful: the tile is computed as two column halves, each loading the A slice again (2x A)."""

MODULE = "gemm"
REJECTED_BY = {"matmul": ["efficiency"]}


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
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
        acc1 = tl.dot(tl.load(a_ptrs, mask=a_mask, other=0.0), b1, acc1)  # the same A slice, loaded again
    rows = c_ptr + offs_m[:, None] * stride_cm
    tl.store(rows + offs_n0[None, :] * stride_cn, acc0.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n0[None, :] < N))
    tl.store(rows + offs_n1[None, :] * stride_cn, acc1.to(c_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n1[None, :] < N))
