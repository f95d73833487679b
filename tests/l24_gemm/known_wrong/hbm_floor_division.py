"""Classic bug: tiles counted with floor division, so a ragged last row or column of tiles moves nothing."""

MODULE = "gemm"
REJECTED_BY = {"tiled_gemm_hbm_bytes": ["correctness"]}


def tiled_gemm_hbm_bytes(m, n, k, block_m, block_n, elem_bytes):
    for name, v in dict(m=m, n=n, k=k, block_m=block_m, block_n=block_n, elem_bytes=elem_bytes).items():
        check_int(name, v, minimum=1)
    return elem_bytes * (m * k * max(1, n // block_n) + k * n * max(1, m // block_m) + m * n)
