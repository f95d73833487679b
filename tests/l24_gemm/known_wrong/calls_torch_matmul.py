"""Cheat: the launcher calls torch.matmul (cuBLAS on a GPU) instead of writing the kernel."""

MODULE = "gemm"
REJECTED_BY = {"matmul": ["correctness", "efficiency"]}


def matmul(a, b, *, block_m=64, block_n=64, block_k=32):
    _check_operands(a, b)
    return torch.matmul(a, b)
