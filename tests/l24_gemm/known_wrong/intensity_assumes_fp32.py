"""Classic bug: 4 bytes per element hard-coded (the lecture's fp32), so fp16 tiles show half their intensity."""

MODULE = "gemm"
REJECTED_BY = {"tile_intensity": ["correctness"]}


def tile_intensity(block_m, block_n, elem_bytes):
    bm, bn = _check_count("block_m", block_m), _check_count("block_n", block_n)
    _check_count("elem_bytes", elem_bytes)
    return 2 * bm * bn / (4 * (bm + bn))
