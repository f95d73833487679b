"""The tanh approximation of GELU: about 1e-4 off the exact (erf) GELU the dense MLP uses."""

MODULE = "tensor_parallel"
REJECTED_BY = {"tp_mlp": ["correctness"]}


def tp_mlp(x, w1_shard, b1_shard, w2_shard, b2):
    hidden = F.gelu(column_parallel_linear(x, w1_shard, b1_shard), approximate="tanh")
    return row_parallel_linear(hidden, w2_shard, b2)
