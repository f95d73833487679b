"""Bug: ascending sort then reversed: fields of equal alignment come out in reverse declaration order."""

MODULE = "cpu_memory"
REJECTED_BY = {"best_field_order": ["correctness"]}


def best_field_order(fields):
    parsed = _check_fields(fields)
    order = sorted(range(len(parsed)), key=lambda i: parsed[i][2])[::-1]
    return [tuple(fields[i]) for i in order]
