"""Classic bug: plain least squares, no constraint: on noisy timings 1/β (or α) comes out negative, a negative
bandwidth or latency that no network has."""

MODULE = "scaling"
REJECTED_BY = {"fit_ddp_alpha_beta": ["correctness"]}


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    sizes, times = _check_timings(world_sizes, step_times_s)
    g = check_int("grad_bytes", grad_bytes, 1)
    if len({p for p in sizes if p > 1}) < 2:
        raise ValueError("world_sizes needs two distinct sizes above 1")
    base = [t for p, t in zip(sizes, times, strict=True) if p == 1]
    t_c = sum(base) / len(base)
    rows = [(*_terms(p, g), t - t_c) for p, t in zip(sizes, times, strict=True) if p > 1]
    saa = sum(a * a for a, _, _ in rows)
    sbb = sum(b * b for _, b, _ in rows)
    sab = sum(a * b for a, b, _ in rows)
    say = sum(a * y for a, _, y in rows)
    sby = sum(b * y for _, b, y in rows)
    det = saa * sbb - sab * sab
    alpha, inv = (sbb * say - sab * sby) / det, (saa * sby - sab * say) / det
    beta = math.inf if inv == 0 else 1 / inv
    fitted = [t_c + a * alpha + b * inv for a, b in (_terms(p, g) for p in sizes)]
    rmse = math.sqrt(sum((f - t) ** 2 for f, t in zip(fitted, times, strict=True)) / len(times))
    return {"t_compute_s": t_c, "alpha_s": alpha, "beta_bytes_per_s": beta, "rmse_s": rmse}
