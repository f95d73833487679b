"""Bug: a negative select index (x[..., -1]) moves the offset backwards instead of wrapping to size − 1."""

MODULE = "layout"
REJECTED_BY = {"apply_ops": ["correctness"]}

_correct_apply_ops = apply_ops


def apply_ops(shape, strides, storage_offset, ops):
    layout = (shape, strides, storage_offset)
    for op in ops:
        if isinstance(op, tuple) and op and op[0] == "select" and isinstance(op[2], int) and op[2] < 0:
            sizes, steps, offset = layout
            d = op[1] % len(sizes)
            moved = _correct_apply_ops(sizes, steps, offset, [op])
            layout = (moved[0], moved[1], offset + op[2] * steps[d])
            if layout[2] < 0:
                layout = (layout[0], layout[1], 0)
        else:
            layout = _correct_apply_ops(*layout, [op])
    return _correct_apply_ops(*layout, [])
