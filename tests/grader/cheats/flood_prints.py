"""Attack (class 9, learner text uncapped): megabytes printed to stdout and stderr at import and in every call, in
the hope that the batch copies the output into every test's result, the log and the feedback; every function then
returns garbage. The results file, the log and the feedback must stay capped and every attacked exercise scores 0."""

import sys

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]

_LINE = "spam " * 2_000 + "\n"


def _spam(lines=200):  # 2 MB a call
    for _ in range(lines):
        sys.stdout.write(_LINE)
        sys.stderr.write(_LINE)


_spam(2_000)


def online_softmax_state(xs):
    _spam()
    return (0.0, 0.0)


def merge_online_states(a, b):
    _spam()
    return (0.0, 0.0)


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    _spam()
    return 0


def softmax_fused(x):
    _spam()
    return x.new_zeros(x.shape)


def softmax_online(x, block_n=128):
    _spam()
    return x.new_zeros(x.shape)
