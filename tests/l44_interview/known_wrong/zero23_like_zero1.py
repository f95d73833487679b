"""The lecture's lab 1: ZeRO-2 and ZeRO-3 fall into the same branch as ZeRO-1 (only the optimizer is sharded)."""

MODULE = "interview"
REJECTED_BY = {"plan_static_bytes": ["correctness"], "judge_plan": ["correctness"]}

_correct_plan_static_bytes = plan_static_bytes


def plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    stage = 1 if zero_stage in (2, 3) else zero_stage
    return _correct_plan_static_bytes(n_params, tp, pp, dp, stage, weight_bytes, grad_bytes, optimizer_bytes)
