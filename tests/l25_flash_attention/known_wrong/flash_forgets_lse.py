"""Classic bug: the ledger leaves out the lse the kernel writes (4 bytes per row)."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_hbm_bytes": ["correctness"]}


def flash_attention_hbm_bytes(n, d, block_m, elem_bytes):
    n, d, b = _check_count("n", n), _check_count("d", d), _check_count("elem_bytes", elem_bytes)
    return 2 * n * d * b + 2 * math.ceil(n / _check_count("block_m", block_m)) * n * d * b
