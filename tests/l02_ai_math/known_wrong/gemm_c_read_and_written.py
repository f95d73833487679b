"""Classic bug: C charged twice (read and written) although the GEMM only writes it (no beta·C term)."""

MODULE = "ai_math"
REJECTED_BY = {"gemm_ledger": ["correctness"]}

_correct_gemm = gemm_ledger


def gemm_ledger(m, k, n, elem_bytes=2):
    got = _correct_gemm(m, k, n, elem_bytes)
    got["write_c"] *= 2
    got["bytes"] = got["read_a"] + got["read_b"] + got["write_c"]
    return got
