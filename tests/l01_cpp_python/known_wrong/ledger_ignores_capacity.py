"""Classic mistake: one pointer slot per element even when the list was over-allocated (capacity ignored)."""

MODULE = "boundary"
REJECTED_BY = {"list_vs_tensor_bytes": ["correctness"]}


def list_vs_tensor_bytes(n, elem_bytes=4, capacity=None):
    check_int("n", n)
    check_int("elem_bytes", elem_bytes, 1)
    if capacity is not None:
        check_int("capacity", capacity)
        if capacity < n:
            raise ValueError(f"capacity must be >= n, got {capacity}")
    parts = {"list_header": 56, "pointer_slots": 8 * n, "float_objects": 24 * n}
    return {**parts, "list_total": sum(parts.values()), "tensor_bytes": n * elem_bytes}
