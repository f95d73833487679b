"""Classic bug: the tag is the line number (addr // line_bytes), forgetting that the set bits were taken out."""

MODULE = "cpu_memory"
REJECTED_BY = {"cache_decompose": ["correctness"]}

_correct_cache_decompose = cache_decompose


def cache_decompose(addr, line_bytes=64, n_sets=64):
    tag, index, offset = _correct_cache_decompose(addr, line_bytes, n_sets)
    return addr // line_bytes, index, offset
