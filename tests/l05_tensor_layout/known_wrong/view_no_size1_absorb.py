"""Bug: new dims of size 1 are not absorbed once a chunk is full, so (2, 3) → (1, 6) is reported impossible."""

MODULE = "layout"
REJECTED_BY = {"view_strides": ["correctness"]}


def view_strides(shape, strides, new_shape):
    sizes, steps = _check_layout(shape, strides)
    numel = math.prod(sizes)
    new = _infer_shape(new_shape, numel)
    if not sizes:
        return (1,) * len(new)
    if numel == 0:
        if new == sizes:
            return steps
        out, acc = [], 1
        for size in reversed(new):
            out.append(acc)
            acc *= max(size, 1)
        return tuple(reversed(out))
    out = [0] * len(new)
    view_d, base, chunk_numel, view_numel = len(new) - 1, steps[-1], 1, 1
    for d in range(len(sizes) - 1, -1, -1):
        chunk_numel *= sizes[d]
        if not (d == 0 or (sizes[d - 1] != 1 and steps[d - 1] != chunk_numel * base)):
            continue
        while view_d >= 0 and view_numel < chunk_numel:
            out[view_d] = view_numel * base
            view_numel *= new[view_d]
            view_d -= 1
        if view_numel != chunk_numel:
            return None
        if d > 0:
            base, chunk_numel, view_numel = steps[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None
