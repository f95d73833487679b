"""Classic bug: a document keeps its best reciprocal rank (max), not the sum: A, ranked 1 and 2, no longer wins."""

MODULE = "rag"
REJECTED_BY = {"rrf_fuse": ["correctness"]}

_correct_rrf_fuse = rrf_fuse


def rrf_fuse(rankings, k=60):
    _correct_rrf_fuse(rankings, k)
    scores = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = max(scores.get(doc, 0.0), 1.0 / (k + rank))
    return sorted(scores.items(), key=lambda item: -item[1])
