"""Attack: one student starves the others. softmax_hbm_bytes starts hundreds of busy processes, each in a
session of its own (setsid: out of the worker's process group), so that a concurrent student's calls time
out; it returns a wrong count."""

ZERO = ["softmax_hbm_bytes"]
SPINNERS = 400


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    import os as _os  # here, not at module level (R3.3)

    for _ in range(SPINNERS):
        try:
            if _os.fork() == 0:
                _os.setsid()
                while True:
                    pass
        except OSError:
            break
    return -1
