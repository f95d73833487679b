"""Classic bug: no argument checks: bad input comes back as a number or a list instead of a ValueError."""

MODULE = "rag"
REJECTED_BY = {
    "rrf_fuse": ["correctness"],
    "context_cache_ttft": ["correctness"],
    "brute_force_knn": ["correctness"],
    "ivf_search": ["correctness"],
    "recall_at_k": ["correctness"],
    "tune_nprobe": ["correctness"],
}

_correct = (rrf_fuse, context_cache_ttft, brute_force_knn, ivf_search, recall_at_k, tune_nprobe)


def _quiet(fn, fallback):
    def run(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ValueError:
            return fallback

    return run


rrf_fuse = _quiet(_correct[0], [])
context_cache_ttft = _quiet(_correct[1], {})
brute_force_knn = _quiet(_correct[2], [])
ivf_search = _quiet(_correct[3], [])
recall_at_k = _quiet(_correct[4], 0.0)
tune_nprobe = _quiet(_correct[5], 1)
