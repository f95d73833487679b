"""Bug: an array is aligned to its whole size (char[3] at a multiple of 3, short[3] of 6), not to its element."""

MODULE = "cpu_memory"
REJECTED_BY = {"struct_layout": ["correctness"]}


def struct_layout(fields):
    parsed = [(name, size, min(size, 8) if size else 1) for name, size, _ in _check_fields(fields)]
    offsets, cursor, align = {}, 0, 1
    for name, size, field_align in parsed:
        cursor = -(-cursor // field_align) * field_align
        offsets[name] = cursor
        cursor += size
        align = max(align, field_align)
    size = -(-cursor // align) * align
    return {"offsets": offsets, "size": size, "align": align, "padding": size - sum(f[1] for f in parsed)}
