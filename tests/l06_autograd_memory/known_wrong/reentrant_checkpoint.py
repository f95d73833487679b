"""use_reentrant=True: with an input that does not require grad, the blocks' weights get no gradient."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpointed_forward": ["correctness"]}


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    start = 0
    for size in split_sizes(len(blocks), segments):
        x = checkpoint(_run_blocks(blocks[start:start + size]), x, use_reentrant=True)
        start += size
    return x
