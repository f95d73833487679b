"""Classic bug: padding always 0.0 whatever pad_value says (a -inf pad for a max, say, would be lost)."""

MODULE = "npu"
REJECTED_BY = {"nd_to_nz": ["correctness"]}


def nd_to_nz(matrix, h0=16, w0=16, pad_value=0.0):
    h, w = _check_matrix(matrix)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    h1, w1 = -(-h // h0), -(-w // w0)
    flat = []
    for bc in range(w1):
        for br in range(h1):
            for i in range(h0):
                for j in range(w0):
                    r, c = br * h0 + i, bc * w0 + j
                    flat.append(matrix[r][c] if r < h and c < w else 0.0)
    return flat, h1 * h0, w1 * w0
