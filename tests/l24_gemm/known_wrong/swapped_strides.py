"""Classic bug: the launcher passes B's strides in the wrong order, so the kernel walks B's columns along k."""

MODULE = "gemm"
REJECTED_BY = {"matmul": ["correctness", "efficiency"]}


def matmul(a, b, *, block_m=64, block_n=64, block_k=32):
    m, n, k = _check_operands(a, b)
    _check_blocks(block_m=block_m, block_n=block_n, block_k=block_k)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(1), b.stride(0),
                         c.stride(0), c.stride(1), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return c
