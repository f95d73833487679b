"""Correct but not fused: softmax_fused runs the two-pass online kernel, reading x twice."""

MODULE = "softmax"
REJECTED_BY = {"softmax_fused": ["efficiency"]}


def softmax_fused(x: torch.Tensor) -> torch.Tensor:
    _check_input(x, MAX_COLS)
    return softmax_online(x, block_n=triton.next_power_of_2(x.shape[1]))
