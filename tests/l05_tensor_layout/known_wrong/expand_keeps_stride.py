"""Classic bug: expand grows a size-1 dim but keeps its old stride (only new leading dims get stride 0)."""

MODULE = "layout"
REJECTED_BY = {"apply_ops": ["correctness"]}

_correct_apply_ops = apply_ops


def apply_ops(shape, strides, storage_offset, ops):
    layout = _correct_apply_ops(shape, strides, storage_offset, [])
    for op in ops:
        sizes, steps, offset = layout
        new = _correct_apply_ops(sizes, steps, offset, [op])
        if isinstance(op, tuple) and op and op[0] == "expand":
            lead = len(new[0]) - len(sizes)
            kept = [steps[j - lead] if j >= lead else 0 for j in range(len(new[0]))]
            new = (new[0], tuple(kept), new[2])
        layout = new
    return layout
