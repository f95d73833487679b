"""Classic bug: the combine sums every choice, kept or dropped (the course lab has no capacity and never drops)."""

MODULE = "moe"
REJECTED_BY = {"moe_combine": ["correctness"]}

_reference_combine = moe_combine


def moe_combine(x, experts, gates, kept, expert_scale):
    return _reference_combine(x, experts, gates, [[True] * len(r) for r in kept], expert_scale)
