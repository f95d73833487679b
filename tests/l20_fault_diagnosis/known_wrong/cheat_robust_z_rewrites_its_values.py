"""Cheat (learner writes flow into the expectation): robust_z computes nothing; it overwrites the caller's list with
copies of its first value and returns zeros. The property test built its expected z-scores after the call, from
that same list (every value at the median: z = 0), then shifted and scaled the rewritten list for its second
check. Now the function is given a copy, and changing it is refused."""

MODULE = "diagnosis"
REJECTED_BY = {"robust_z": ["correctness"]}


def robust_z(values):
    if isinstance(values, list) and values:
        values[:] = [values[0]] * len(values)
    return [0.0] * len(values)
