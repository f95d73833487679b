"""Classic bug: sorted ascending, then reversed: equal scores come out in reverse first-appearance order."""

MODULE = "rag"
REJECTED_BY = {"rrf_fuse": ["correctness"]}

_correct_rrf_fuse = rrf_fuse


def rrf_fuse(rankings, k=60):
    return sorted(_correct_rrf_fuse(rankings, k), key=lambda item: item[1])[::-1]
