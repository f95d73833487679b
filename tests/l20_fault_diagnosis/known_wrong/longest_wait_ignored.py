"""Confirms the slowest compute without the inversion check: a rank that computes and waits longest is blamed."""

MODULE = "diagnosis"
REJECTED_BY = {"find_straggler": ["correctness"]}

_right_straggler = find_straggler


def find_straggler(compute_ms, wait_ms, threshold=3.5):
    got = _right_straggler(compute_ms, wait_ms, threshold)
    return {**got, "confirmed": got["z"] > threshold}
