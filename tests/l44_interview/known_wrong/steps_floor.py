"""Steps rounded down: 238,418 steps leave 4.9M tokens of the 2T untrained."""

MODULE = "interview"
REJECTED_BY = {"training_run": ["correctness"]}

_correct_training_run = training_run


def training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops=H100.bf16_flops, gpus_per_node=8,
                 node_hour_price=180.0):
    got = _correct_training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops, gpus_per_node,
                                node_hour_price)
    steps = total_tokens // tokens_per_step
    scale = steps / got["steps"] if got["steps"] else 0.0
    return {**got, "steps": steps, "days": got["days"] * scale, "cost": got["cost"] * scale}
