"""Classic bug: a multiply-add counted as one FLOP, so a 128×128 fp32 tile shows 16 FLOP/B instead of 32."""

MODULE = "gemm"
REJECTED_BY = {"tile_intensity": ["correctness"]}


def tile_intensity(block_m, block_n, elem_bytes):
    bm, bn = _check_count("block_m", block_m), _check_count("block_n", block_n)
    return bm * bn / (_check_count("elem_bytes", elem_bytes) * (bm + bn))
