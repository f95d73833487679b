"""Bug: each chunk's strides start from 1 instead of the chunk's innermost stride."""

MODULE = "layout"
REJECTED_BY = {"view_strides": ["correctness"], "apply_ops": ["correctness"]}

_correct_view_strides = view_strides


def view_strides(shape, strides, new_shape):
    sizes, steps = _check_layout(shape, strides)
    got = _correct_view_strides(shape, strides, new_shape)
    if got is None or not sizes or math.prod(sizes) == 0:
        return got
    out, acc = [], 1
    new = _infer_shape(new_shape, math.prod(sizes))
    for size in reversed(new):
        out.append(acc)
        acc *= size
    return tuple(reversed(out))
