"""Classic bug: A re-read once per row of tiles and B once per column (the factors swapped)."""

MODULE = "gemm"
REJECTED_BY = {"tiled_gemm_hbm_bytes": ["correctness"]}


def tiled_gemm_hbm_bytes(m, n, k, block_m, block_n, elem_bytes):
    for name, v in dict(m=m, n=n, k=k, block_m=block_m, block_n=block_n, elem_bytes=elem_bytes).items():
        check_int(name, v, minimum=1)
    return elem_bytes * (m * k * math.ceil(m / block_m) + k * n * math.ceil(n / block_n) + m * n)
