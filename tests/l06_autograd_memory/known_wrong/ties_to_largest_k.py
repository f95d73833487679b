"""Ties broken towards more segments (<= instead of <): (32, 1, 1) answers 8 instead of 4."""

MODULE = "autograd_memory"
REJECTED_BY = {"checkpoint_plan": ["correctness"]}


def checkpoint_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer):
    n = check_int("n_layers", n_layers, 1)
    act = check_int("act_bytes_per_layer", act_bytes_per_layer)
    inp = check_int("input_bytes_per_layer", input_bytes_per_layer)
    best_k, best_peak = 1, inp + n * act
    for k in range(2, n + 1):
        peak = k * inp + -(-n // k) * act
        if peak <= best_peak:
            best_k, best_peak = k, peak
    return {"segments": best_k, "peak_bytes": best_peak, "no_ckpt_bytes": n * act, "recompute_flops_pct": 33}
