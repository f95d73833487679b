"""Classic bug: no argument checks; bad layouts, shapes and ops come back as answers or as the wrong error."""

MODULE = "layout"
REJECTED_BY = {
    "is_contiguous": ["correctness"],
    "view_strides": ["correctness"],
    "apply_ops": ["correctness"],
    "memory_relation": ["correctness"],
}


def _check_layout(shape, strides):
    return tuple(shape), tuple(strides)


def _infer_shape(new_shape, numel):
    new = tuple(new_shape)
    if -1 in new:
        known = math.prod(s for s in new if s != -1) or 1
        new = tuple(numel // known if s == -1 else s for s in new)
    return new


def check_int(name, value, minimum=0):
    return value


_correct_memory_relation = memory_relation


def memory_relation(a, b):
    if not hasattr(a, "untyped_storage") or not hasattr(b, "untyped_storage"):
        return "distinct_storage"
    return _correct_memory_relation(a, b)
