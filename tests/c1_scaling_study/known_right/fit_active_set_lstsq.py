"""Another correct algorithm: numpy's least squares (SVD) on the unscaled columns, then an active-set pass over
the four sign patterns (both free, α only, 1/β only, neither), keeping the feasible pair with the smallest error."""

MODULE = "scaling"
ACCEPTED = ["fit_ddp_alpha_beta"]


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    import numpy as np

    sizes, times = _check_timings(world_sizes, step_times_s)
    g = check_int("grad_bytes", grad_bytes, 1)
    if len({p for p in sizes if p > 1}) < 2:
        raise ValueError(f"world_sizes needs two distinct sizes above 1, got {sizes}")
    t_c = float(np.mean([t for p, t in zip(sizes, times, strict=True) if p == 1]))
    x = np.array([_terms(p, g) for p in sizes if p > 1])
    y = np.array([t - t_c for p, t in zip(sizes, times, strict=True) if p > 1])
    best = (math.inf, 0.0, 0.0)
    for cols in ((0, 1), (0,), (1,), ()):
        coef = np.zeros(2)
        if cols:
            coef[list(cols)] = np.linalg.lstsq(x[:, list(cols)], y, rcond=None)[0]
        if (coef < 0).any():
            continue
        sse = float(np.sum((y - x @ coef) ** 2))
        if sse < best[0]:
            best = (sse, float(coef[0]), float(coef[1]))
    _, alpha, inv = best
    fitted = [t_c + a * alpha + b * inv for a, b in (_terms(p, g) for p in sizes)]
    rmse = math.sqrt(sum((f - t) ** 2 for f, t in zip(fitted, times, strict=True)) / len(times))
    return {"t_compute_s": t_c, "alpha_s": alpha, "beta_bytes_per_s": math.inf if inv == 0 else 1 / inv,
            "rmse_s": rmse}
