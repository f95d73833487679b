"""Classic bug: k = 60 written into the formula: the argument k is validated, then ignored."""

MODULE = "rag"
REJECTED_BY = {"rrf_fuse": ["correctness"]}

_correct_rrf_fuse = rrf_fuse


def rrf_fuse(rankings, k=60):
    check_int("k", k, 0)
    return _correct_rrf_fuse(rankings, 60)
