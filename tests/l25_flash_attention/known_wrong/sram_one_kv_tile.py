"""Classic bug: the SRAM budget counts a K tile but forgets the V tile staged beside it."""

MODULE = "attention"
REJECTED_BY = {"sram_tile_bytes": ["correctness"]}


def sram_tile_bytes(block_m, block_n, d, elem_bytes):
    bm, bn = _check_count("block_m", block_m), _check_count("block_n", block_n)
    return (bm + bn) * _check_count("d", d) * _check_count("elem_bytes", elem_bytes)
