"""Classic confusion: f and g swapped (all-reduce in f's forward, identity in g's forward)."""

MODULE = "tensor_parallel"
REJECTED_BY = {
    "copy_to_tp": ["correctness"],
    "reduce_from_tp": ["correctness"],
    "column_parallel_linear": ["correctness"],
    "row_parallel_linear": ["correctness"],
    "tp_mlp": ["correctness"],
}


def copy_to_tp(x):
    return _ReduceFromTP.apply(x)


def reduce_from_tp(x):
    return _CopyToTP.apply(x)
