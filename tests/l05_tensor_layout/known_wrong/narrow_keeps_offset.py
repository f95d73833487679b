"""Classic bug: narrow (x[1:]) changes the size but not the storage offset, as if the slice were a new tensor."""

MODULE = "layout"
REJECTED_BY = {"apply_ops": ["correctness"]}

_correct_apply_ops = apply_ops


def apply_ops(shape, strides, storage_offset, ops):
    layout = _correct_apply_ops(shape, strides, storage_offset, [])
    for op in ops:
        moved = _correct_apply_ops(*layout, [op])
        narrow = isinstance(op, tuple) and op[:1] == ("narrow",)
        layout = (moved[0], moved[1], layout[2]) if narrow else moved
    return layout
