"""Bookkeeping bug: the rmse over the P > 1 runs only (the runs the two-variable fit used), not over every run."""

MODULE = "scaling"
REJECTED_BY = {"fit_ddp_alpha_beta": ["correctness"]}

_reference_fit = fit_ddp_alpha_beta


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    out = _reference_fit(world_sizes, step_times_s, grad_bytes)
    pairs = [(p, t) for p, t in zip(world_sizes, step_times_s, strict=True) if p > 1]
    err = [out["t_compute_s"] + out["alpha_s"] * a + b / out["beta_bytes_per_s"] - t
           for (a, b), (_, t) in zip((_terms(p, grad_bytes) for p, _ in pairs), pairs, strict=True)]
    out["rmse_s"] = math.sqrt(sum(e * e for e in err) / len(err))
    return out
