"""Classic bug: the cap is never applied, every gradient goes into one bucket (no overlap at all)."""

MODULE = "ddp"
REJECTED_BY = {"assign_buckets": ["correctness"], "ddp_backward_timeline": ["correctness"]}


def assign_buckets(param_bytes, cap_bytes, first_cap_bytes=None):
    sizes = _check_sizes(param_bytes)
    _check_caps(cap_bytes, first_cap_bytes)
    return [list(reversed(range(len(sizes))))] if sizes else []
