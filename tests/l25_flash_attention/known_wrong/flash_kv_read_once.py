"""Classic bug: K and V counted once, as if every Q tile could share one pass over them."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_hbm_bytes": ["correctness"]}


def flash_attention_hbm_bytes(n, d, block_m, elem_bytes):
    n, d, b = _check_count("n", n), _check_count("d", d), _check_count("elem_bytes", elem_bytes)
    _check_count("block_m", block_m)
    return 4 * n * d * b + 4 * n
