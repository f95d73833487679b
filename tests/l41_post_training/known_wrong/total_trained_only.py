"""Classic bug: the total counts the trained models only; frozen reference and reward models take memory too."""

MODULE = "post_training"
REJECTED_BY = {"rlhf_static_bytes": ["correctness"]}

_correct_rlhf = rlhf_static_bytes


def rlhf_static_bytes(n_params, algorithm, frozen_reference=True):
    parts = _correct_rlhf(n_params, algorithm, frozen_reference)
    parts["total"] = parts["actor"] + parts.get("critic", 0)
    return parts
