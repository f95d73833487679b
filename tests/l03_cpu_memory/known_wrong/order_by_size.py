"""Bug: fields sorted by size instead of alignment (a char[9] goes before a double)."""

MODULE = "cpu_memory"
REJECTED_BY = {"best_field_order": ["correctness"]}


def best_field_order(fields):
    parsed = _check_fields(fields)
    order = sorted(range(len(parsed)), key=lambda i: -parsed[i][1])
    return [tuple(fields[i]) for i in order]
