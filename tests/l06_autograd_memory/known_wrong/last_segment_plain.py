"""The last group run outside checkpoint() ("its gradient is needed right away"): its activations stay saved."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpointed_forward": ["correctness"]}


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    sizes, start = split_sizes(len(blocks), segments), 0
    for i, size in enumerate(sizes):
        run = _run_blocks(blocks[start:start + size])
        x = run(x) if i == len(sizes) - 1 else checkpoint(run, x, use_reentrant=False)
        start += size
    return x
