"""No argument checks: negative sizes, zero caps and negative times go through silently."""

MODULE = "ddp"
REJECTED_BY = {"assign_buckets": ["correctness"], "ddp_backward_timeline": ["correctness"]}


def _check_sizes(param_bytes):
    return list(param_bytes)


def _check_caps(cap_bytes, first_cap_bytes):
    return cap_bytes, cap_bytes if first_cap_bytes is None else first_cap_bytes


def _check_timeline(grad_ready_s, n, alpha_s, bytes_per_s):
    return [float(t) for t in grad_ready_s]


def check_int(name, value, minimum=0):
    return value
