"""Classic bug: fp32 master weights added on top of the 12 B/param optimizer states (16 B/param)."""

MODULE = "ledger"
REJECTED_BY = {"training_memory": ["correctness"]}

_correct_training_memory = training_memory


def training_memory(n_params, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    parts = _correct_training_memory(n_params, weight_bytes, grad_bytes, optimizer_bytes)
    parts["optimizer"] += 4 * n_params  # "plus the fp32 master copy" (already in the 12)
    parts["total"] += 4 * n_params
    return parts
