"""Correct alternative: the streaming state as a left fold of the merge over one-element states."""

MODULE = "softmax"
ACCEPTED = ["online_softmax_state"]

import functools


def online_softmax_state(xs):
    singletons = ((float(x), 1.0) if x != -math.inf else (-math.inf, 0.0) for x in xs)
    return functools.reduce(merge_online_states, singletons, (-math.inf, 0.0))
