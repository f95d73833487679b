"""Classic bug: only A (r × d_in) counted; B (d_out × r) is trained too."""

MODULE = "post_training"
REJECTED_BY = {"lora_params": ["correctness"]}

_correct_lora = lora_params


def lora_params(n_layers, target_shapes, rank):
    _correct_lora(n_layers, target_shapes, rank)
    return n_layers * sum(rank * d_in for d_in, _ in target_shapes)
