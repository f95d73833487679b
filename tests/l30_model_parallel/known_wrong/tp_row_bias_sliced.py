"""Classic bug: the row-parallel shard gets a slice of the bias too (it has no output slice to match)."""

MODULE = "tensor_parallel"
REJECTED_BY = {"shard_linear": ["correctness"]}

_right_shard_linear = shard_linear


def shard_linear(weight, bias, world_size, rank, style):
    w, b = _right_shard_linear(weight, bias, world_size, rank, style)
    if style == "row" and b is not None:
        n = b.shape[0] // world_size
        b = b[rank * n:(rank + 1) * n].clone()
    return w, b
