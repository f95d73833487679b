"""range(8, max_size, 8): the maximum itself (512) is never captured, 66 sizes."""

MODULE = "async_exec"
REJECTED_BY = {"vllm_capture_sizes": ["correctness"]}


def vllm_capture_sizes(max_size=VLLM_MAX_CAPTURE_SIZE):
    m = check_int("max_size", max_size, 1)
    return [s for s in (1, 2, 4) if s <= m] + list(range(8, m, 8))
