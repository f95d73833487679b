"""Classic bug: the output counted as k×n instead of m×n (a transposed shape in the bytes)."""

MODULE = "roofline"
REJECTED_BY = {"gemm_intensity": ["correctness"]}


def gemm_intensity(m, k, n, elem_bytes):
    m, k, n = _check_dim("m", m), _check_dim("k", k), _check_dim("n", n)
    elem_bytes = _check_dim("elem_bytes", elem_bytes)
    return 2 * m * k * n / (elem_bytes * (m * k + k * n + k * n))
