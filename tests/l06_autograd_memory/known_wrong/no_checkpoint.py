"""Plain forward through every block: right values, but every activation stays saved and nothing is rerun."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpointed_forward": ["correctness"]}


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    return _run_blocks(blocks)(x)
