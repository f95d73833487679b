"""Wide accesses counted as one phase of 32 threads: 16-byte reads are served eight threads at a time."""

MODULE = "capstone"
REJECTED_BY = {"column_read_conflict": ["correctness"]}


def column_read_conflict(cols, pad, elem_bytes=2, access_bytes=None, col=0):
    ab = elem_bytes if access_bytes is None else access_bytes
    if ((cols + pad) * elem_bytes) % ab:
        raise ValueError(f"pad = {pad}: pitch not a multiple of access_bytes")
    if cols < 1 or col * elem_bytes + ab > cols * elem_bytes or (col * elem_bytes) % ab:
        raise ValueError(f"col = {col} / cols = {cols} out of range")
    pitch = (cols + pad) * elem_bytes
    banks = {}
    for t in range(32):  # all 32 threads in one phase, whatever the width
        start = t * pitch + col * elem_bytes
        for word in range(start // 4, (start + ab - 1) // 4 + 1):
            banks.setdefault(word % 32, set()).add(word)
    return max(len(w) for w in banks.values())
