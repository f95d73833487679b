"""Floor division: a model of Ψ parameters split over TP·PP and DP loses the remainder."""

MODULE = "interview"
REJECTED_BY = {"plan_static_bytes": ["correctness"], "judge_plan": ["correctness"]}

_correct_plan_static_bytes = plan_static_bytes


def plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    got = _correct_plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes, grad_bytes, optimizer_bytes)
    local = n_params // (tp * pp)
    shard = local // dp
    parts = {"weights": (shard if zero_stage >= 3 else local) * weight_bytes,
             "grads": (shard if zero_stage >= 2 else local) * grad_bytes,
             "optimizer": (shard if zero_stage >= 1 else local) * optimizer_bytes}
    return {**parts, "total": sum(parts.values())} if got else got
