"""Classic bug: a tensor with no elements is judged by its strides (torch says an empty tensor is contiguous)."""

MODULE = "layout"
REJECTED_BY = {"is_contiguous": ["correctness"]}


def is_contiguous(shape, strides):
    sizes, steps = _check_layout(shape, strides)
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(steps), strict=True):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True
