"""Attack (class 9, learner text uncapped): every function returns a wrong value whose text is enormous (a list of
millions of floats, an int of 200,000 digits, an object whose repr is megabytes), so that each failure message
that quotes what the learner returned grows without bound; warnings with huge, all-different texts too. The results
file, the log and the feedback must stay capped and every attacked exercise scores 0."""

import warnings

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]


class _Loud(float):
    def __repr__(self):
        return "9" * 1_000_000

    __str__ = __repr__


def _warn():
    for i in range(10):
        warnings.warn(f"{i} " + "noise " * 20_000, stacklevel=2)


def online_softmax_state(xs):
    _warn()
    return (_Loud(1.0), [0.5] * 100_000)


def merge_online_states(a, b):
    _warn()
    return (_Loud(1.0), _Loud(2.0))


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    _warn()
    return 10 ** 200_000 if algorithm == "fused" else [10 ** 100_000] * 30


def softmax_fused(x):
    _warn()
    return [float(i) for i in range(100_000)]


def softmax_online(x, block_n=128):
    _warn()
    return {str(i): "x" * 1000 for i in range(5_000)}
