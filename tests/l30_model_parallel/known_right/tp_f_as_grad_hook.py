"""Correct alternative: f as a view whose gradient hook all-reduces (no autograd.Function), shards by chunk()."""

MODULE = "tensor_parallel"
ACCEPTED = ["copy_to_tp", "column_parallel_linear", "tp_mlp", "shard_linear"]


def copy_to_tp(x):
    y = x.view_as(x)
    if y.requires_grad:
        def all_reduce_grad(grad):
            grad = grad.clone()
            dist.all_reduce(grad)
            return grad
        y.register_hook(all_reduce_grad)
    return y


_right_shard_linear = shard_linear


def shard_linear(weight, bias, world_size, rank, style):
    _right_shard_linear(weight, bias, world_size, rank, style)  # the same checks
    dim = 0 if style == "column" else 1
    w = torch.chunk(weight, world_size, dim=dim)[rank].contiguous().clone()
    if bias is None:
        return w, None
    return w, (torch.chunk(bias, world_size)[rank] if style == "column" else bias).contiguous().clone()
