"""The H100's memory taken as 80 GB (8e10 B) instead of 80 GiB."""

MODULE = "interview"
REJECTED_BY = {"judge_plan": ["correctness"]}

_correct_judge_plan = judge_plan


def judge_plan(n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node=8,
               gpu_memory_bytes=80_000_000_000):
    return _correct_judge_plan(n_params, n_gpus, tp, pp, dp, zero_stage, activation_bytes, gpus_per_node,
                               gpu_memory_bytes)
