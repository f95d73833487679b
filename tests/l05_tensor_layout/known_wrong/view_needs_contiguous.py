"""Classic belief: view works only on contiguous tensors (legal views of transposed tensors refused)."""

MODULE = "layout"
REJECTED_BY = {"view_strides": ["correctness"], "apply_ops": ["correctness"]}


def view_strides(shape, strides, new_shape):
    sizes, steps = _check_layout(shape, strides)
    new = _infer_shape(new_shape, math.prod(sizes))
    if not is_contiguous(sizes, steps):
        return None
    out, acc = [], 1
    for size in reversed(new):
        out.append(acc)
        acc *= max(size, 1)
    return tuple(reversed(out))
