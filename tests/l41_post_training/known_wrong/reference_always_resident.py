"""Course erratum #18: GRPO's reference counted whatever frozen_reference says (the diagram's 16 vs the code's 18)."""

MODULE = "post_training"
REJECTED_BY = {"rlhf_static_bytes": ["correctness"]}

_correct_rlhf = rlhf_static_bytes


def rlhf_static_bytes(n_params, algorithm, frozen_reference=True):
    _correct_rlhf(n_params, algorithm, frozen_reference)
    return _correct_rlhf(n_params, algorithm, True)
