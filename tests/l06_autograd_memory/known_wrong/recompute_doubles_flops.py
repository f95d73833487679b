""""Recomputing the forward doubles the work": 100 % instead of (8P - 6P) / 6P = 33 %."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpoint_plan": ["correctness"]}

_right_plan = checkpoint_plan


def checkpoint_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer):
    return {**_right_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer), "recompute_flops_pct": 100}
