"""FA2 as the ideal: K and V counted once, not once per Q tile (lab 1's 4nd·2 lower bound)."""

MODULE = "capstone"
REJECTED_BY = {"fa_loop_order_bytes": ["correctness"]}


def fa_loop_order_bytes(n, d, block_m, block_n, elem_bytes=2):
    for name, v in (("n", n), ("d", d), ("block_m", block_m), ("block_n", block_n), ("elem_bytes", elem_bytes)):
        check_int(name, v, 1)
    tc = -(-n // block_n)
    x = n * d * elem_bytes
    return {"fa1": 3 * x + 8 * n + tc * (3 * x + 16 * n), "fa2": 4 * x + 4 * n,
            "naive": 4 * n * n * elem_bytes + 4 * n * d * elem_bytes, "ideal": 4 * x}
