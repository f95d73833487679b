"""Correct alternative: sort the captured sizes once and bisect for the batch."""

import bisect

MODULE = "async_exec"
ACCEPTED = ["graph_bucket"]


def graph_bucket(batch, capture_sizes):
    b = check_int("batch", batch, 1)
    sizes = sorted(set(_check_capture_sizes(capture_sizes)))
    i = bisect.bisect_left(sizes, b)
    return None if i == len(sizes) else (sizes[i], sizes[i] - b)
