"""Classic bug: the prediction forgets the latency term (bytes over bandwidth only): at large P the 2(P − 1)·α
messages are exactly what stops the scaling."""

MODULE = "scaling"
REJECTED_BY = {"predicted_efficiency": ["correctness"]}


def predicted_efficiency(fit, world_size, grad_bytes):
    if not isinstance(fit, dict) or "t_compute_s" not in fit:
        raise ValueError("fit must be fit_ddp_alpha_beta's dict")
    t_c = fit["t_compute_s"]
    return t_c / ddp_step_seconds(world_size, t_c, grad_bytes, 0.0, fit["beta_bytes_per_s"])
