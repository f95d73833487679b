"""Nodes billed as n_gpus / gpus_per_node, a fraction: 1001 GPUs rent 125.125 nodes."""

MODULE = "interview"
REJECTED_BY = {"training_run": ["correctness"]}

_correct_training_run = training_run


def training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops=H100.bf16_flops, gpus_per_node=8,
                 node_hour_price=180.0):
    got = _correct_training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops, gpus_per_node,
                                node_hour_price)
    return {**got, "cost": got["days"] * 24 * n_gpus / gpus_per_node * node_hour_price}
