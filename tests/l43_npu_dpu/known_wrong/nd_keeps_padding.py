"""Classic bug: nz_to_nd returns the padded H_p × W_p grid instead of the h × w matrix."""

MODULE = "npu"
REJECTED_BY = {"nz_to_nd": ["correctness"]}


def nz_to_nd(flat, h, w, h0=16, w0=16):
    h, w = check_int("h", h, 1), check_int("w", w, 1)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    h1, w1 = -(-h // h0), -(-w // w0)
    if len(flat) != h1 * h0 * w1 * w0:
        raise ValueError("flat has the wrong length")
    return [[flat[((c // w0) * h1 + r // h0) * h0 * w0 + (r % h0) * w0 + c % w0] for c in range(w1 * w0)]
            for r in range(h1 * h0)]
