"""Cheat: returns x.t().contiguous(), the library's transpose, instead of writing the kernel."""

MODULE = "transpose"
REJECTED_BY = {"transpose": ["correctness", "efficiency"]}


def transpose(x, block_m=32, block_n=32):
    _check_input(x)
    return x.t().contiguous()
