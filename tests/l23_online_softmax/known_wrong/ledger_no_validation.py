"""Classic bug: no argument checks; an unknown algorithm or a negative size returns a number."""

MODULE = "softmax"
REJECTED_BY = {"softmax_hbm_bytes": ["correctness"]}


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    reads = {"three_pass": 3, "online": 2, "fused": 1}.get(algorithm, 1)
    return int((reads + 1) * n_rows * n_cols * elem_bytes)
