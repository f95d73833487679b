"""Classic bug: MKN FLOPs (multiply-accumulates), not 2MKN: the add of each term is not counted."""

MODULE = "ai_math"
REJECTED_BY = {"gemm_ledger": ["correctness"]}

_correct_gemm = gemm_ledger


def gemm_ledger(m, k, n, elem_bytes=2):
    got = _correct_gemm(m, k, n, elem_bytes)
    got["flops"] //= 2
    return got
