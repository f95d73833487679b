"""Classic bug: blocks = n // B: the partial last block is dropped (37 tokens in 2 blocks of 16)."""

MODULE = "paged"
REJECTED_BY = {"blocks_needed": ["correctness"], "paged_utilization": ["correctness"]}


def blocks_needed(n_tokens, block_size):
    return check_int("n_tokens", n_tokens, 0) // check_int("block_size", block_size, 1)
