"""Classic bug: the SRAM budget counts a K tile but forgets the V tile staged beside it."""

MODULE = "attention"
REJECTED_BY = {"sram_tile_bytes": ["correctness"]}


def sram_tile_bytes(block_m, block_n, d, elem_bytes):
    bm, bn = check_int("block_m", block_m, minimum=1), check_int("block_n", block_n, minimum=1)
    return (bm + bn) * check_int("d", d, minimum=1) * check_int("elem_bytes", elem_bytes, minimum=1)
