"""Classic bug: no argument checks; zero, negative or float sizes return numbers."""

MODULE = "attention"
REJECTED_BY = {"attention_hbm_bytes": ["correctness"], "flash_attention_hbm_bytes": ["correctness"],
               "sram_tile_bytes": ["correctness"]}


def attention_hbm_bytes(n, d, elem_bytes):
    return int(4 * n * n * elem_bytes + 4 * n * d * elem_bytes)


def flash_attention_hbm_bytes(n, d, block_m, elem_bytes):
    return int(2 * n * d * elem_bytes + 2 * -(-n // (block_m or 1)) * n * d * elem_bytes + 4 * n)


def sram_tile_bytes(block_m, block_n, d, elem_bytes):
    return int((block_m * d + 2 * block_n * d) * elem_bytes)
