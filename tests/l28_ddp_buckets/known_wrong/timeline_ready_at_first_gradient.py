"""Classic bug: a bucket is taken as ready when its FIRST gradient arrives instead of its last."""

MODULE = "ddp"
REJECTED_BY = {"ddp_backward_timeline": ["correctness"]}

_right_timeline = ddp_backward_timeline


def ddp_backward_timeline(grad_ready_s, param_bytes, cap_bytes, world_size, alpha_s, bytes_per_s,
                          first_cap_bytes=None):
    out = _right_timeline(grad_ready_s, param_bytes, cap_bytes, world_size, alpha_s, bytes_per_s, first_cap_bytes)
    ready = [min(grad_ready_s[i] for i in b) for b in out["buckets"]]
    start, end = [], []
    for b, n in enumerate(out["bucket_bytes"]):
        start.append(max(ready[b], end[-1]) if end else ready[b])
        end.append(start[-1] + allreduce_seconds(n, world_size, alpha_s, bytes_per_s))
    out.update(ready_s=ready, start_s=start, end_s=end)
    out["exposed_s"] = max(0.0, end[-1] - out["backward_s"]) if end else 0.0
    out["step_s"] = out["backward_s"] + out["exposed_s"]
    return out
