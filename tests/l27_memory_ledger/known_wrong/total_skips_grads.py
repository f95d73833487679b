"""Classic bug: the total forgets the gradients (weights + optimizer only)."""

MODULE = "ledger"
REJECTED_BY = {"training_memory": ["correctness"]}

_correct_training_memory = training_memory


def training_memory(n_params, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    parts = _correct_training_memory(n_params, weight_bytes, grad_bytes, optimizer_bytes)
    parts["total"] = parts["weights"] + parts["optimizer"]
    return parts
