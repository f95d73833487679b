"""Classic bug: Q tiles counted with floor division; the ragged last tile streams no K or V."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_hbm_bytes": ["correctness"]}


def flash_attention_hbm_bytes(n, d, block_m, elem_bytes):
    n, d, b = check_int("n", n, minimum=1), check_int("d", d, minimum=1), check_int("elem_bytes", elem_bytes, minimum=1)
    tiles = max(1, n // check_int("block_m", block_m, minimum=1))
    return 2 * n * d * b + 2 * tiles * n * d * b + 4 * n
