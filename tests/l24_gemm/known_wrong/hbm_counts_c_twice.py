"""Classic bug: C counted as read and written (C += A·B); this kernel only writes C, once."""

MODULE = "gemm"
REJECTED_BY = {"tiled_gemm_hbm_bytes": ["correctness"]}


def tiled_gemm_hbm_bytes(m, n, k, block_m, block_n, elem_bytes):
    for name, v in dict(m=m, n=n, k=k, block_m=block_m, block_n=block_n, elem_bytes=elem_bytes).items():
        check_int(name, v, minimum=1)
    return elem_bytes * (m * k * math.ceil(n / block_n) + k * n * math.ceil(m / block_m) + 2 * m * n)
