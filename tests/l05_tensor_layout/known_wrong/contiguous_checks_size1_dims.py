"""Classic bug: a size-1 dim's stride is compared too, so (1, 3) with strides (99, 1) is 'not contiguous'."""

MODULE = "layout"
REJECTED_BY = {"is_contiguous": ["correctness"]}


def is_contiguous(shape, strides):
    sizes, steps = _check_layout(shape, strides)
    if 0 in sizes:
        return True
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(steps), strict=True):
        if stride != expected:
            return False
        expected *= size
    return True
