"""Classic bug: a size-0 dimension multiplies the strides before it by 0 (PyTorch uses max(size, 1))."""

MODULE = "ai_math"
REJECTED_BY = {"contiguous_strides": ["correctness"]}


def contiguous_strides(shape):
    sizes = [check_int(f"shape[{i}]", s, minimum=0) for i, s in enumerate(shape)]
    strides = [1] * len(sizes)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    return tuple(strides)
