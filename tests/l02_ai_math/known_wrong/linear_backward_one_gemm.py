"""Classic bug: backward counted as one GEMM (dX only): the weight gradient dW = Xᵀ·G is forgotten."""

MODULE = "ai_math"
REJECTED_BY = {"linear_train_flops": ["correctness"]}

_correct_linear = linear_train_flops


def linear_train_flops(n_tokens, d_in, d_out):
    got = _correct_linear(n_tokens, d_in, d_out)
    got["backward_weight"] = 0
    got["total"] = got["forward"] + got["backward_input"]
    return got
