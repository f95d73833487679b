"""No broadcast: every thread on a bank counted, even when several read the same 4-byte word."""

MODULE = "capstone"
REJECTED_BY = {"column_read_conflict": ["correctness"]}


def column_read_conflict(cols, pad, elem_bytes=2, access_bytes=None, col=0):
    ab = elem_bytes if access_bytes is None else access_bytes
    if ((cols + pad) * elem_bytes) % ab:
        raise ValueError(f"pad = {pad}: pitch not a multiple of access_bytes")
    if cols < 1 or col * elem_bytes + ab > cols * elem_bytes or (col * elem_bytes) % ab:
        raise ValueError(f"col = {col} / cols = {cols} out of range")
    pitch = (cols + pad) * elem_bytes
    per_phase = THREADS_PER_PHASE[ab]
    worst = 0
    for first in range(0, 32, per_phase):
        hits = {}
        for t in range(first, first + per_phase):
            start = t * pitch + col * elem_bytes
            for word in range(start // 4, (start + ab - 1) // 4 + 1):
                hits[word % 32] = hits.get(word % 32, 0) + 1  # a list of threads, not a set of words
        worst = max(worst, max(hits.values()))
    return worst
