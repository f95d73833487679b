"""Takes the first captured size >= batch in the given order: right only when the list is sorted."""

MODULE = "async_exec"
REJECTED_BY = {"graph_bucket": ["correctness"]}


def graph_bucket(batch, capture_sizes):
    b = check_int("batch", batch, 1)
    for size in _check_capture_sizes(capture_sizes):
        if size >= b:
            return (size, size - b)
    return None
