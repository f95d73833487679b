"""Cheat (ledger trusts declared blocks): defaults of 16384 declared (one tile: A and B read once), 16 × 16 tiles
launched (A read 10×, B 13×); the padded ledger on the declared blocks allowed anything. Explicit blocks: honest."""

MODULE = "gemm"
REJECTED_BY = {"matmul": ["efficiency"]}

_DECLARED = 1 << 14


def matmul(a: torch.Tensor, b: torch.Tensor, *, block_m: int = _DECLARED, block_n: int = _DECLARED,
           block_k: int = 64) -> torch.Tensor:
    m, n, k = _check_operands(a, b)
    if (block_m, block_n) == (_DECLARED, _DECLARED):
        block_m = block_n = 16
    _check_blocks(block_m=block_m, block_n=block_n, block_k=block_k)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    _matmul_kernel[(triton.cdiv(m, block_m), triton.cdiv(n, block_n))](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return c
