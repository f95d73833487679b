"""A peak exactly equal to the GPU's memory called OOM (>= instead of >)."""

MODULE = "interview"
REJECTED_BY = {"judge_plan": ["correctness"]}

_correct_judge_plan = judge_plan


def judge_plan(
    n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node=8, gpu_memory_bytes=H100.hbm_bytes
):
    got = _correct_judge_plan(
        n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node, gpu_memory_bytes
    )
    if got["headroom_bytes"] == 0:
        got["errors"], got["passed"] = sorted(got["errors"] + ["oom"]), False
    return got
