"""Classic bug: a backward waits only for its own stage's forward, not for the next stage's backward (the gradient
has not arrived yet)."""

MODULE = "pipeline"
REJECTED_BY = {"simulate_pipeline": ["correctness"]}


def _dependency(op, s, p):
    kind, i = op
    if kind == "F":
        return (s - 1, "F", i) if s > 0 else None
    return (s, "F", i)
