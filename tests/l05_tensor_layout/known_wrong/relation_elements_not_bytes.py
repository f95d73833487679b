"""Bug: overlap tested on element offsets instead of byte ranges, so views of different dtypes are compared wrongly."""

MODULE = "layout"
REJECTED_BY = {"memory_relation": ["correctness"]}

_correct_memory_relation = memory_relation


def memory_relation(a, b):
    got = _correct_memory_relation(a, b)
    if got == "distinct_storage":
        return got
    def starts(t):
        base = (t.data_ptr() - t.untyped_storage().data_ptr()) // t.element_size()
        return {base + sum(i * s for i, s in zip(idx, t.stride(), strict=True))
                for idx in product(*(range(n) for n in t.shape))}
    return "overlap" if starts(a) & starts(b) else "shared_no_overlap"
