"""Classic bug: the size stops after the last field; arrays of the struct would misalign (17 instead of 24)."""

MODULE = "cpu_memory"
REJECTED_BY = {"struct_layout": ["correctness"]}

_correct_struct_layout = struct_layout


def struct_layout(fields):
    got = _correct_struct_layout(fields)
    parsed = _check_fields(fields)
    end = max((got["offsets"][name] + size for name, size, _ in parsed), default=0)
    return {**got, "size": end, "padding": end - sum(size for _, size, _ in parsed)}
