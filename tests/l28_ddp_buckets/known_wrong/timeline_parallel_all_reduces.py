"""Classic bug: every bucket's all-reduce starts when the bucket is ready, as if they ran side by side on the wire."""

MODULE = "ddp"
REJECTED_BY = {"ddp_backward_timeline": ["correctness"]}

_right_timeline = ddp_backward_timeline


def ddp_backward_timeline(grad_ready_s, param_bytes, cap_bytes, world_size, alpha_s, bytes_per_s,
                          first_cap_bytes=None):
    out = _right_timeline(grad_ready_s, param_bytes, cap_bytes, world_size, alpha_s, bytes_per_s, first_cap_bytes)
    out["start_s"] = list(out["ready_s"])
    out["end_s"] = [s + allreduce_seconds(n, world_size, alpha_s, bytes_per_s)
                    for s, n in zip(out["start_s"], out["bucket_bytes"], strict=True)]
    out["exposed_s"] = max(0.0, max(out["end_s"], default=0.0) - out["backward_s"])
    out["step_s"] = out["backward_s"] + out["exposed_s"]
    return out
