"""Classic bug: no padding: partial blocks are stored short and the unpadded H, W are returned."""

MODULE = "npu"
REJECTED_BY = {"nd_to_nz": ["correctness"]}


def nd_to_nz(matrix, h0=16, w0=16, pad_value=0.0):
    h, w = _check_matrix(matrix)
    h0, w0 = check_int("h0", h0, 1), check_int("w0", w0, 1)
    flat = []
    for c0 in range(0, w, w0):
        for r0 in range(0, h, h0):
            for r in range(r0, min(r0 + h0, h)):
                flat.extend(matrix[r][c0:min(c0 + w0, w)])
    return flat, h, w
