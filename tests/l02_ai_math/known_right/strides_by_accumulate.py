"""Correct alternative: strides as a reversed running product (itertools.accumulate)."""

MODULE = "ai_math"
ACCEPTED = ["contiguous_strides"]

import itertools
import operator


def contiguous_strides(shape):
    sizes = [max(check_int(f"shape[{i}]", s, minimum=0), 1) for i, s in enumerate(shape)]
    if not sizes:
        return ()
    products = itertools.accumulate(reversed(sizes[1:]), operator.mul, initial=1)
    return tuple(reversed(list(products)))
