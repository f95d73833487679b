"""Capture sizes as powers of two (the lecture's [1, 2, 4, ..., 256] list), not vLLM's multiples of 8."""

MODULE = "async_exec"
REJECTED_BY = {"vllm_capture_sizes": ["correctness"]}


def vllm_capture_sizes(max_size=VLLM_MAX_CAPTURE_SIZE):
    m = check_int("max_size", max_size, 1)
    sizes, s = [], 1
    while s <= m:
        sizes.append(s)
        s *= 2
    return sizes
