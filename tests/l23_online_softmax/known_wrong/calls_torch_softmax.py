"""Cheat: calls torch.softmax instead of writing the kernel (refused by the kernel guard)."""

MODULE = "softmax"
REJECTED_BY = {"softmax_fused": ["correctness", "efficiency"]}


def softmax_fused(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)
