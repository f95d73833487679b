"""torch.utils.checkpoint.checkpoint_sequential: its last segment runs without checkpointing (3584 B vs 768 B)."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpointed_forward": ["correctness"]}

from torch.utils.checkpoint import checkpoint_sequential


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    segments = check_int("segments", segments, 1)
    if segments > len(blocks):
        raise ValueError(f"segments must be <= len(blocks) = {len(blocks)}, got {segments}")
    return checkpoint_sequential(nn.Sequential(*blocks), segments, x, use_reentrant=False)
