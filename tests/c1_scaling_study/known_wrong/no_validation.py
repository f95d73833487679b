"""Classic bug: no argument checks: a run list without P = 1, a zero time or a missing fit key come back as numbers
or as a bare KeyError/ZeroDivisionError."""

MODULE = "scaling"
REJECTED_BY = {
    "ddp_step_seconds": ["correctness"],
    "fit_ddp_alpha_beta": ["correctness"],
    "scaling_efficiency": ["correctness"],
    "predicted_efficiency": ["correctness"],
}


def ddp_step_seconds(world_size, t_compute_s, grad_bytes, alpha_s, bytes_per_s):
    p = max(world_size, 1)
    return t_compute_s + 2 * (p - 1) * alpha_s + (2 * (p - 1) / p * grad_bytes / bytes_per_s if bytes_per_s else 0.0)


def scaling_efficiency(world_sizes, step_times_s):
    by = {}
    for p, t in zip(world_sizes, step_times_s, strict=False):
        by.setdefault(p, []).append(t)
    mean = {p: sum(ts) / len(ts) for p, ts in by.items()}
    one = mean.get(1, min(mean.values(), default=1.0))
    return {p: one / mean[p] if mean[p] else 0.0 for p in sorted(mean) if p > 1}


def predicted_efficiency(fit, world_size, grad_bytes):
    t_c = fit.get("t_compute_s", 1.0)
    beta = fit.get("beta_bytes_per_s", math.inf) or math.inf
    p = max(world_size, 1)
    return t_c / (t_c + 2 * (p - 1) * fit.get("alpha_s", 0.0) + 2 * (p - 1) / p * grad_bytes / beta)


_checked_fit = fit_ddp_alpha_beta


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    try:
        return _checked_fit(world_sizes, step_times_s, grad_bytes)
    except ValueError:
        return {"t_compute_s": min(step_times_s, default=0.0), "alpha_s": 0.0, "beta_bytes_per_s": math.inf,
                "rmse_s": 0.0}
