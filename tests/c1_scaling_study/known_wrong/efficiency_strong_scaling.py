"""Wrong experiment: the strong-scaling formula T(1) / (P · T(P)) applied to a weak-scaling run, where the per-rank
batch is fixed and the ideal step time is T(1) itself."""

MODULE = "scaling"
REJECTED_BY = {"scaling_efficiency": ["correctness"]}

_reference_efficiency = scaling_efficiency


def scaling_efficiency(world_sizes, step_times_s):
    return {p: e / p for p, e in _reference_efficiency(world_sizes, step_times_s).items()}
