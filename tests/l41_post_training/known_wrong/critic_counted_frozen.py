"""Classic bug: PPO's critic counted as a frozen model (2 B/param): it is trained, with gradients and Adam states."""

MODULE = "post_training"
REJECTED_BY = {"rlhf_static_bytes": ["correctness"]}

_correct_rlhf = rlhf_static_bytes


def rlhf_static_bytes(n_params, algorithm, frozen_reference=True):
    parts = _correct_rlhf(n_params, algorithm, frozen_reference)
    if "critic" in parts:
        parts["critic"] = FROZEN_BYTES * n_params
        parts["total"] = sum(v for k, v in parts.items() if k != "total")
    return parts
