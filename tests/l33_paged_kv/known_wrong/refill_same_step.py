"""Bug: a finished slot's next request starts in the same step (the slot is never idle for one step)."""

MODULE = "paged"
REJECTED_BY = {"static_vs_continuous_steps": ["correctness"]}

_correct_steps = static_vs_continuous_steps


def static_vs_continuous_steps(lengths, batch_size):
    out = _correct_steps(lengths, batch_size)
    slots = [0] * batch_size
    for n in lengths:
        k = slots.index(min(slots))
        slots[k] += n - 1 if slots[k] else n
    out["continuous_steps"] = max(slots)
    return out
