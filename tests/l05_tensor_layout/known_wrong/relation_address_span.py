"""Classic bug: overlap tested on [first byte, last byte] spans, so interleaved columns x[:, 0], x[:, 1] 'overlap'."""

MODULE = "layout"
REJECTED_BY = {"memory_relation": ["correctness"]}

_correct_memory_relation = memory_relation


def _span(t):
    lo = t.data_ptr()
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
    return lo, lo + (last + 1) * t.element_size()


def memory_relation(a, b):
    got = _correct_memory_relation(a, b)
    if got == "distinct_storage" or a.numel() == 0 or b.numel() == 0:
        return got
    (lo_a, hi_a), (lo_b, hi_b) = _span(a), _span(b)
    return "overlap" if lo_a < hi_b and lo_b < hi_a else "shared_no_overlap"
