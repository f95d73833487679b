"""2·Ψ FLOPs per token (the forward pass only): a step three times too short."""

MODULE = "interview"
REJECTED_BY = {"training_run": ["correctness"]}

_correct_training_run = training_run


def training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops=H100.bf16_flops, gpus_per_node=8,
                 node_hour_price=180.0):
    got = _correct_training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops, gpus_per_node,
                                node_hour_price)
    return {**got, "flops_per_step": got["flops_per_step"] // 3, "step_s": got["step_s"] / 3,
            "days": got["days"] / 3, "cost": got["cost"] / 3}
