"""Attack (points for refusing): softmax_hbm_bytes checks its arguments exactly as asked (the solution's own checks
run first) and then computes nothing, returning 0: every bad-argument test passes, every value is wrong, so its
bad-argument points are withheld with the rest."""

ZERO = ["softmax_hbm_bytes"]

_checked = softmax_hbm_bytes


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    _checked(n_rows, n_cols, elem_bytes, algorithm)  # raises ValueError naming a bad argument
    return 0
