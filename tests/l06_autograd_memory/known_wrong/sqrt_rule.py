"""Course L06 §5.3 taken literally: k = round(√L) segments, whatever a checkpoint costs against a layer."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpoint_plan": ["correctness"]}


def checkpoint_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer):
    n = check_int("n_layers", n_layers, 1)
    act = check_int("act_bytes_per_layer", act_bytes_per_layer)
    inp = check_int("input_bytes_per_layer", input_bytes_per_layer)
    k = max(1, round(math.sqrt(n)))
    return {"segments": k, "peak_bytes": k * inp + -(-n // k) * act, "no_ckpt_bytes": n * act,
            "recompute_flops_pct": 33}


import math
