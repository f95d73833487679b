"""Classic bug: column-major (Fortran) strides: the FIRST dimension moves by 1."""

MODULE = "ai_math"
REJECTED_BY = {"contiguous_strides": ["correctness"]}

_correct_strides = contiguous_strides


def contiguous_strides(shape):
    return tuple(reversed(_correct_strides(tuple(reversed(shape)))))
