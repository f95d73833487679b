"""TP beyond one node treated as an error (the lecture makes it a warning; the plan is legal, only slow)."""

MODULE = "interview"
REJECTED_BY = {"judge_plan": ["correctness"]}

_correct_judge_plan = judge_plan


def judge_plan(
    n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node=8, gpu_memory_bytes=H100.hbm_bytes
):
    got = _correct_judge_plan(
        n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node, gpu_memory_bytes
    )
    if got["warnings"]:
        got["errors"] = sorted(got["errors"] + ["tp_crosses_node"])
        got["warnings"], got["passed"] = [], False
    return got
