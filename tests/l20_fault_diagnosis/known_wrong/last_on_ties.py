"""Breaks compute ties toward the highest rank (max over reversed ranks)."""

MODULE = "diagnosis"
REJECTED_BY = {"find_straggler": ["correctness"]}

_right_straggler = find_straggler


def find_straggler(compute_ms, wait_ms, threshold=3.5):
    got = _right_straggler(compute_ms, wait_ms, threshold)
    top = max(compute_ms)
    culprit = max(r for r, c in enumerate(compute_ms) if c == top)
    z = robust_z(compute_ms)[culprit]
    return {"culprit": culprit, "z": z, "confirmed": got["confirmed"] and culprit == got["culprit"]}
