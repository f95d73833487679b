"""Classic bug: nz_to_nd counts block-rows as h // h0, so the blocks of a ragged matrix are read from wrong places."""

MODULE = "npu"
REJECTED_BY = {"nz_to_nd": ["correctness"]}


def nz_to_nd(flat, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    if len(flat) != -(-h // h0) * h0 * -(-w // w0) * w0:
        raise ValueError("flat has the wrong length")
    h1 = max(h // h0, 1)
    out = []
    for r in range(h):
        row = []
        for c in range(w):
            k = ((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0
            row.append(flat[k] if k < len(flat) else 0.0)
        out.append(row)
    return out
