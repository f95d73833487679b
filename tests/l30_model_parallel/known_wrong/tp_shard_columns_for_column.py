"""Layout trap (lecture 30 §1.2 and lab 6.1 write Y = X·W with W [in, out]): "column" taken as the columns of
nn.Linear's [out, in] weight, which are its INPUT features."""

MODULE = "tensor_parallel"
REJECTED_BY = {"shard_linear": ["correctness"]}

_right_shard_linear = shard_linear


def shard_linear(weight, bias, world_size, rank, style):
    swapped = {"column": "row", "row": "column"}.get(style, style)
    return _right_shard_linear(weight, bias, world_size, rank, swapped)
