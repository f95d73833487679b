"""No argument checks: an unknown style, a split that does not divide, a rank beyond the group go through."""

MODULE = "tensor_parallel"
REJECTED_BY = {"shard_linear": ["correctness"]}


def shard_linear(weight, bias, world_size, rank, style):
    dim = 0 if style == "column" else 1
    size = weight.shape[dim] // world_size
    w = weight.narrow(dim, rank * size, size).contiguous().clone()
    if bias is None:
        return w, None
    return w, (bias.narrow(0, rank * size, size) if style == "column" else bias).clone()
