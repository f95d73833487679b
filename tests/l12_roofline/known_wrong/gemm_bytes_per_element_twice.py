"""Classic bug: bytes per element counted twice, 2·elem_bytes·(mk + kn + mn) (the course's fp16 "2" kept as well)."""

MODULE = "roofline"
REJECTED_BY = {"gemm_intensity": ["correctness"]}

_correct_gemm_intensity = gemm_intensity


def gemm_intensity(m, k, n, elem_bytes):
    return _correct_gemm_intensity(m, k, n, elem_bytes) / 2
