"""Attack (class 9, learner text uncapped): every function raises an exception whose message is megabytes long,
chained ten deep (``raise ... from``), so that the batch's results, logs and feedback grow without bound: the
results file, the log and the feedback must stay capped and every attacked exercise scores 0."""

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]

_BIG = "overflow " * 120_000  # 1 MB of text per message


def _flood(depth=10):
    try:
        if depth:
            _flood(depth - 1)
        raise ValueError(_BIG)
    except ValueError as exc:
        raise RuntimeError(_BIG + str(depth)) from exc


def online_softmax_state(xs):
    _flood()


def merge_online_states(a, b):
    _flood()


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    _flood()


def softmax_fused(x):
    _flood()


def softmax_online(x, block_n=128):
    _flood()
