"""No argument checks: a capacity below n, a float n or a zero element size is computed instead of refused."""

MODULE = "boundary"
REJECTED_BY = {"list_vs_tensor_bytes": ["correctness"]}


def list_vs_tensor_bytes(n, elem_bytes=4, capacity=None):
    slots = n if capacity is None else capacity
    parts = {"list_header": 56, "pointer_slots": 8 * slots, "float_objects": 24 * n}
    return {**parts, "list_total": sum(parts.values()), "tensor_bytes": n * elem_bytes}
