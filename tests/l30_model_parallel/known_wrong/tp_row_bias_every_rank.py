"""Classic bug: the row-parallel bias is added on every rank BEFORE g, so the sum counts it P times."""

MODULE = "tensor_parallel"
REJECTED_BY = {"row_parallel_linear": ["correctness"], "tp_mlp": ["correctness"]}


def row_parallel_linear(x_shard, weight_shard, bias):
    return reduce_from_tp(F.linear(x_shard, weight_shard, bias))
