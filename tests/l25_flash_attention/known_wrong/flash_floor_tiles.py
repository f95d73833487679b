"""Classic bug: Q tiles counted with floor division; the ragged last tile streams no K or V."""

MODULE = "attention"
REJECTED_BY = {"flash_attention_hbm_bytes": ["correctness"]}


def flash_attention_hbm_bytes(n, d, block_m, elem_bytes):
    n, d, b = _check_count("n", n), _check_count("d", d), _check_count("elem_bytes", elem_bytes)
    tiles = max(1, n // _check_count("block_m", block_m))
    return 2 * n * d * b + 2 * tiles * n * d * b + 4 * n
