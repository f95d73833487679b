"""Attack: sys.exit(0) inside online_softmax_state, i.e. in the middle of a test."""

import sys

ZERO = ["online_softmax_state"]


def online_softmax_state(xs):
    sys.exit(0)
