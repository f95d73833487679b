"""Classic bug: t_compute taken from the first P = 1 run instead of the mean of all of them."""

MODULE = "scaling"
REJECTED_BY = {"fit_ddp_alpha_beta": ["correctness"]}

_reference_fit = fit_ddp_alpha_beta


def fit_ddp_alpha_beta(world_sizes, step_times_s, grad_bytes):
    _check_timings(world_sizes, step_times_s)
    first = step_times_s[list(world_sizes).index(1)]
    sizes = [p for p in world_sizes if p > 1]
    times = [t for p, t in zip(world_sizes, step_times_s, strict=True) if p > 1]
    return _reference_fit([1, *sizes], [first, *times], grad_bytes)
