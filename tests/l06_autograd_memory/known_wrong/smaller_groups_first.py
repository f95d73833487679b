"""Groups sized smaller first (10 blocks in 4: [2, 2, 3, 3] instead of [3, 3, 2, 2])."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpointed_forward": ["correctness"]}


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    start = 0
    for size in reversed(split_sizes(len(blocks), segments)):
        x = checkpoint(_run_blocks(blocks[start:start + size]), x, use_reentrant=False)
        start += size
    return x
