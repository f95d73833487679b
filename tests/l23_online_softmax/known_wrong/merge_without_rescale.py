"""Classic bug: the merge adds the two denominators without bringing them to a common max."""

MODULE = "softmax"
REJECTED_BY = {"merge_online_states": ["correctness"]}


def merge_online_states(a, b):
    return max(a[0], b[0]), a[1] + b[1]
