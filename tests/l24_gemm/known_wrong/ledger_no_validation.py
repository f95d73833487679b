"""Classic bug: no argument checks; zero, negative or float sizes return a number or divide by zero."""

MODULE = "gemm"
REJECTED_BY = {"tile_intensity": ["correctness"], "tiled_gemm_hbm_bytes": ["correctness"]}


def tile_intensity(block_m, block_n, elem_bytes):
    return 2 * block_m * block_n / (elem_bytes * (block_m + block_n) or 1)


def tiled_gemm_hbm_bytes(m, n, k, block_m, block_n, elem_bytes):
    return int(elem_bytes * (m * k * -(-n // (block_n or 1)) + k * n * -(-m // (block_m or 1)) + m * n))
