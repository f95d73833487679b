"""Another model, not the contract's: t_compute fitted jointly with α and 1/β by three-parameter least squares
over every run, instead of the mean of the P = 1 runs (the P = 1 runs no longer pin the compute time)."""

MODULE = "scaling"
REJECTED_BY = {"fit_ddp_alpha_beta": ["correctness"]}

_reference_fit = fit_ddp_alpha_beta


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    import numpy as np

    out = _reference_fit(world_sizes, step_times_s, grad_bytes)
    a = np.array([[1.0, *_terms(p, grad_bytes)] for p in world_sizes])
    sol = np.linalg.lstsq(a, np.array(step_times_s, dtype=float), rcond=None)[0]
    if min(sol) < 0:
        return out
    fitted = a @ sol
    rmse = float(np.sqrt(np.mean((fitted - np.array(step_times_s)) ** 2)))
    return {"t_compute_s": float(sol[0]), "alpha_s": float(sol[1]),
            "beta_bytes_per_s": math.inf if sol[2] == 0 else float(1 / sol[2]), "rmse_s": rmse}
