"""Classic bug: one sector per element, from its first byte: elements spanning a sector boundary are undercounted."""

MODULE = "ledger"
REJECTED_BY = {"warp_sectors": ["correctness"]}


def warp_sectors(stride_elems, elem_bytes=4):
    stride_elems = check_int("stride_elems", stride_elems, 0)
    elem_bytes = check_int("elem_bytes", elem_bytes, 1)
    return len({t * stride_elems * elem_bytes // SECTOR_BYTES for t in range(WARP_SIZE)})
