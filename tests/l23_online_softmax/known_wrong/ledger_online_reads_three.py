"""Classic bug: the online algorithm charged three reads of x (its max and sum share one pass)."""

MODULE = "softmax"
REJECTED_BY = {"softmax_hbm_bytes": ["correctness"]}

_correct_softmax_hbm_bytes = softmax_hbm_bytes


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    if algorithm == "online":
        algorithm = "three_pass"
    return _correct_softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm)
