"""The lecture's own total, 6N² + 8Nd at fp16: its §1.2 items (S written, read; P written, read) sum to 8N²."""

MODULE = "attention"
REJECTED_BY = {"attention_hbm_bytes": ["correctness"]}


def attention_hbm_bytes(n, d, elem_bytes):
    n, d, b = check_int("n", n, minimum=1), check_int("d", d, minimum=1), check_int("elem_bytes", elem_bytes, minimum=1)
    return 3 * n * n * b + 4 * n * d * b
