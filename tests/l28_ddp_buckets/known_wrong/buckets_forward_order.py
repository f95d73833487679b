"""Classic bug (lecture 28 §2.3): buckets filled in registration (forward) order, so bucket 0 waits for the
backward's last gradient."""

MODULE = "ddp"
REJECTED_BY = {
    "assign_buckets": ["correctness"],
    "ddp_backward_timeline": ["correctness"],
    "BucketedReducer": ["correctness", "efficiency"],  # and no overlap: bucket 0 needs parameter 0
}


def assign_buckets(param_bytes, cap_bytes, first_cap_bytes=None):
    sizes = _check_sizes(param_bytes)
    cap, first = _check_caps(cap_bytes, first_cap_bytes)
    buckets, open_bucket, filled = [], [], 0
    for i in range(len(sizes)):
        open_bucket.append(i)
        filled += sizes[i]
        if filled >= (first if not buckets else cap):
            buckets.append(open_bucket)
            open_bucket, filled = [], 0
    if open_bucket:
        buckets.append(open_bucket)
    return buckets
