"""The lecture's lab 1 prints GiB floats under a "GB" label: 28.0 for plan B."""

MODULE = "interview"
REJECTED_BY = {"plan_static_bytes": ["correctness"], "judge_plan": ["correctness"]}

_correct_plan_static_bytes = plan_static_bytes


def plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    got = _correct_plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes, grad_bytes, optimizer_bytes)
    return {k: v / 2**30 for k, v in got.items()}
