"""Classic bug: ZeRO-3 traffic counted like ZeRO-2: the weights' all-gather in the backward is forgotten."""

MODULE = "zero"
REJECTED_BY = {"zero_comm_bytes_per_gpu": ["correctness"]}

_correct_zero_comm_bytes_per_gpu = zero_comm_bytes_per_gpu


def zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2):
    return _correct_zero_comm_bytes_per_gpu(n_params, n_gpus, 2 if stage == 3 else stage, weight_bytes, grad_bytes)
