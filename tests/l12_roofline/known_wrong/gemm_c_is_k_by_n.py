"""Classic bug: the output counted as k×n instead of m×n (a transposed shape in the bytes)."""

MODULE = "roofline"
REJECTED_BY = {"gemm_intensity": ["correctness"]}


def gemm_intensity(m, k, n, elem_bytes):
    m, k, n = check_int("m", m, minimum=1), check_int("k", k, minimum=1), check_int("n", n, minimum=1)
    elem_bytes = check_int("elem_bytes", elem_bytes, minimum=1)
    return 2 * m * k * n / (elem_bytes * (m * k + k * n + k * n))
