"""Classic bug: 'same memory' decided by data_ptr(), which includes the storage offset: x and x[1:] look distinct."""

MODULE = "layout"
REJECTED_BY = {"memory_relation": ["correctness"]}

_correct_memory_relation = memory_relation


def memory_relation(a, b):
    got = _correct_memory_relation(a, b)
    if got != "distinct_storage" and a.data_ptr() != b.data_ptr():
        return "distinct_storage"
    return got
