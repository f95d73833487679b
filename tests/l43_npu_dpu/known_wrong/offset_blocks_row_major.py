"""Classic bug: blocks stored row of blocks by row of blocks (Z between blocks too) instead of block-column first."""

MODULE = "npu"
REJECTED_BY = {"nz_offset": ["correctness"]}


def nz_offset(r, c, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if check_int("r", r) >= h:
        raise ValueError("r out of range")
    if check_int("c", c) >= w:
        raise ValueError("c out of range")
    w1 = -(-w // w0)
    return ((r // h0) * w1 + c // w0) * h0 * w0 + (r % h0) * w0 + c % w0
