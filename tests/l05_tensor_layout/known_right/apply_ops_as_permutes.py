"""Another correct apply_ops: transpose as a permute, select as a length-1 narrow whose dim is then dropped."""

MODULE = "layout"
ACCEPTED = ["apply_ops"]

_one_op = apply_ops


def apply_ops(shape, strides, storage_offset, ops):
    layout = _one_op(shape, strides, storage_offset, [])
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of op tuples, got {ops!r}")
    for i, op in enumerate(ops):
        sizes, steps, offset = layout
        n = len(sizes)
        try:
            if isinstance(op, tuple) and len(op) == 3 and op[0] == "transpose":
                order = list(range(n))
                d0, d1 = _wrap(op[1], n), _wrap(op[2], n)
                order[d0], order[d1] = order[d1], order[d0]
                layout = _one_op(sizes, steps, offset, [("permute", tuple(order))])
            elif isinstance(op, tuple) and len(op) == 3 and op[0] == "select":
                d = _wrap(op[1], n)
                index = _wrap(op[2], sizes[d])
                s, st, off = _one_op(sizes, steps, offset, [("narrow", d, index, 1)])
                layout = (s[:d] + s[d + 1:], st[:d] + st[d + 1:], off)
            else:
                layout = _one_op(sizes, steps, offset, [op])
        except ValueError as err:
            raise ValueError(f"ops[{i}] = {op!r} is invalid: {err}") from None
    return layout
