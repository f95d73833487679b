"""Attack: remove the grader's torch-function guard (pop every torch function mode) and then call
torch.softmax; the counted traffic shows no kernel launch."""

import torch

ZERO = ["softmax_online"]


def softmax_online(x, block_n=128):
    from torch.overrides import _get_current_function_mode_stack

    stack = _get_current_function_mode_stack()
    for _ in stack:
        torch._C._pop_torch_function_stack()
    try:
        return torch.softmax(x.float(), dim=-1).to(x.dtype)
    finally:
        for mode in stack:
            torch._C._push_on_torch_function_stack(mode)


# Known gap, stated (grader/BATCH.md): the guard runs where the learner's code runs, so this passes
# the correctness tier; the efficiency tier (no kernel launch counted) still scores 0.
GAP_TIERS = ["correctness"]
