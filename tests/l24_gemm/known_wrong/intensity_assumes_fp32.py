"""Classic bug: 4 bytes per element hard-coded (the lecture's fp32), so fp16 tiles show half their intensity."""

MODULE = "gemm"
REJECTED_BY = {"tile_intensity": ["correctness"]}


def tile_intensity(block_m, block_n, elem_bytes):
    bm, bn = check_int("block_m", block_m, minimum=1), check_int("block_n", block_n, minimum=1)
    check_int("elem_bytes", elem_bytes, minimum=1)
    return 2 * bm * bn / (4 * (bm + bn))
