"""Picks the nearest captured size, which may be smaller than the batch (requests silently dropped)."""

MODULE = "async_exec"
REJECTED_BY = {"graph_bucket": ["correctness"]}


def graph_bucket(batch, capture_sizes):
    b = check_int("batch", batch, 1)
    sizes = _check_capture_sizes(capture_sizes)
    if b > max(sizes):
        return None
    size = min(sizes, key=lambda s: (abs(s - b), s))
    return (size, size - b)
