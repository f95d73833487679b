"""No validation: a float n or a bool block_m is computed with instead of refused (ValueError naming it)."""

MODULE = "capstone"
REJECTED_BY = {"fa_loop_order_bytes": ["correctness"]}


def fa_loop_order_bytes(n, d, block_m, block_n, elem_bytes=2):
    tr, tc = -(-n // block_m), -(-n // block_n)
    x = n * d * elem_bytes
    return {"fa1": 3 * x + 8 * n + tc * (3 * x + 16 * n), "fa2": 2 * x + 2 * tr * x + 4 * n,
            "naive": 4 * n * n * elem_bytes + 4 * n * d * elem_bytes, "ideal": 4 * x}

