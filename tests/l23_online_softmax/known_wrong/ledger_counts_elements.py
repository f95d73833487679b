"""Classic bug: the ledger counts elements, not bytes (elem_bytes forgotten)."""

MODULE = "softmax"
REJECTED_BY = {"softmax_hbm_bytes": ["correctness"]}

_correct_softmax_hbm_bytes = softmax_hbm_bytes


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    return _correct_softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm) // elem_bytes
