"""Classic bug: a multiply-add counted as one FLOP, so a 128×128 fp32 tile shows 16 FLOP/B instead of 32."""

MODULE = "gemm"
REJECTED_BY = {"tile_intensity": ["correctness"]}


def tile_intensity(block_m, block_n, elem_bytes):
    bm, bn = check_int("block_m", block_m, minimum=1), check_int("block_n", block_n, minimum=1)
    return bm * bn / (check_int("elem_bytes", elem_bytes, minimum=1) * (bm + bn))
