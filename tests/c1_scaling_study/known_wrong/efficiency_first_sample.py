"""Classic bug: each world size's first timing instead of the mean of its runs."""

MODULE = "scaling"
REJECTED_BY = {"scaling_efficiency": ["correctness"]}


def scaling_efficiency(world_sizes, step_times_s):
    sizes, times = _check_timings(world_sizes, step_times_s)
    first = {}
    for p, t in zip(sizes, times, strict=True):
        first.setdefault(p, t)
    return {p: first[1] / first[p] for p in sorted(first) if p > 1}
