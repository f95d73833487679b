"""A segment taken as L // k layers: the longer segments of an uneven split are under-counted."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpoint_plan": ["correctness"]}


def checkpoint_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer):
    n = check_int("n_layers", n_layers, 1)
    act = check_int("act_bytes_per_layer", act_bytes_per_layer)
    inp = check_int("input_bytes_per_layer", input_bytes_per_layer)
    peak, k = min((k * inp + n // k * act, k) for k in range(1, n + 1))
    return {"segments": k, "peak_bytes": peak, "no_ckpt_bytes": n * act, "recompute_flops_pct": 33}
