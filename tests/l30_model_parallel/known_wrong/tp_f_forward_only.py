"""Classic bug (lecture 30 lab 6.1 checks the forward only): f is the identity both ways, so x's gradient keeps
only this rank's output features' share."""

MODULE = "tensor_parallel"
REJECTED_BY = {
    "copy_to_tp": ["correctness"],
    "column_parallel_linear": ["correctness"],
    "tp_mlp": ["correctness", "efficiency"],  # and no all-reduce left in the backward
}


def copy_to_tp(x):
    return x
