"""Classic bug: every bucket gets cap_bytes; DDP's small first bucket (first_cap_bytes) is ignored."""

MODULE = "ddp"
REJECTED_BY = {"assign_buckets": ["correctness"], "ddp_backward_timeline": ["correctness"]}

_right_assign_buckets = assign_buckets


def assign_buckets(param_bytes, cap_bytes, first_cap_bytes=None):
    _check_caps(cap_bytes, first_cap_bytes)
    return _right_assign_buckets(param_bytes, cap_bytes)
