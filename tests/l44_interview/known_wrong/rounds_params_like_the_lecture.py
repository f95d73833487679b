"""The lecture's arithmetic: parameters per GPU rounded to 0.01 B first (6.33B), so plan B reads 30.07 GB."""

MODULE = "interview"
REJECTED_BY = {"plan_static_bytes": ["correctness"], "judge_plan": ["correctness"]}


def plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    check_int("n_params", n_params), check_int("tp", tp, 1), check_int("pp", pp, 1), check_int("dp", dp, 1)
    stage = _check_stage(zero_stage)
    local = round(n_params / (tp * pp) / 1e7) * 10**7  # "405B / 64 ≈ 6.33B"
    shard = local // dp
    parts = {"weights": (shard if stage >= 3 else local) * weight_bytes,
             "grads": (shard if stage >= 2 else local) * grad_bytes,
             "optimizer": (shard if stage >= 1 else local) * optimizer_bytes}
    return {**parts, "total": sum(parts.values())}
