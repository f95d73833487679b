"""Classic bug: H1 = h // h0 (floor), so a matrix whose height is not a multiple of h0 overlaps block-columns."""

MODULE = "npu"
REJECTED_BY = {"nz_offset": ["correctness"]}


def nz_offset(r, c, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if check_int("r", r) >= h:
        raise ValueError("r out of range")
    if check_int("c", c) >= w:
        raise ValueError("c out of range")
    h1 = max(h // h0, 1)
    return ((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0
