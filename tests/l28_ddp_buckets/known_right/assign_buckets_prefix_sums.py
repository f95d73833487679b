"""Correct alternative: bucket boundaries from running totals over the reversed sizes (no open-bucket state)."""

MODULE = "ddp"
ACCEPTED = ["assign_buckets", "ddp_backward_timeline"]


def assign_buckets(param_bytes, cap_bytes, first_cap_bytes=None):
    sizes = _check_sizes(param_bytes)
    cap, first = _check_caps(cap_bytes, first_cap_bytes)
    order = list(range(len(sizes) - 1, -1, -1))
    buckets, start, total = [], 0, 0
    for pos, i in enumerate(order):
        total += sizes[i]
        if total >= (cap if buckets else first):
            buckets.append(order[start:pos + 1])
            start, total = pos + 1, 0
    return buckets + ([order[start:]] if start < len(order) else [])
