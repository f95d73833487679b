"""Classic bug: ranks counted from 0 (enumerate without start=1): the top document scores 1/k instead of 1/(k + 1)."""

MODULE = "rag"
REJECTED_BY = {"rrf_fuse": ["correctness"]}

_correct_rrf_fuse = rrf_fuse


def rrf_fuse(rankings, k=60):
    _correct_rrf_fuse(rankings, k)  # the same validation
    scores = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / max(k + rank, 1)
    return sorted(scores.items(), key=lambda item: -item[1])
