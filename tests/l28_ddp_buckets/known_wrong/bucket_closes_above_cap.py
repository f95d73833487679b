"""Off by one: a bucket closes only once it EXCEEDS its cap (>), not when it reaches it (>=)."""

MODULE = "ddp"
REJECTED_BY = {"assign_buckets": ["correctness"]}


def assign_buckets(param_bytes, cap_bytes, first_cap_bytes=None):
    sizes = _check_sizes(param_bytes)
    cap, first = _check_caps(cap_bytes, first_cap_bytes)
    buckets, open_bucket, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        open_bucket.append(i)
        filled += sizes[i]
        if filled > (first if not buckets else cap):
            buckets.append(open_bucket)
            open_bucket, filled = [], 0
    if open_bucket:
        buckets.append(open_bucket)
    return buckets
