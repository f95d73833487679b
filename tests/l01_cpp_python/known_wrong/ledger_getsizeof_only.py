"""Classic mistake: sys.getsizeof(list) taken as its whole cost: the 24-byte float objects are left out."""

MODULE = "boundary"
REJECTED_BY = {"list_vs_tensor_bytes": ["correctness"]}


def list_vs_tensor_bytes(n, elem_bytes=4, capacity=None):
    check_int("n", n)
    check_int("elem_bytes", elem_bytes, 1)
    if capacity is not None:
        check_int("capacity", capacity)
        if capacity < n:
            raise ValueError(f"capacity must be >= n, got {capacity}")
    slots = n if capacity is None else capacity
    parts = {"list_header": 56, "pointer_slots": 8 * slots, "float_objects": 0}
    return {**parts, "list_total": sum(parts.values()), "tensor_bytes": n * elem_bytes}
