"""Classic bug: the global top-k taken first, then the vectors outside the probed lists dropped (fewer than k back)."""

MODULE = "rag"
REJECTED_BY = {"ivf_search": ["correctness"]}

_correct_ivf_search = ivf_search


def ivf_search(query, vectors, centroids, nprobe, k):
    probed = set(_correct_ivf_search(query, vectors, centroids, nprobe, len(vectors)))
    top = _correct_ivf_search(query, vectors, centroids, len(centroids), k)
    return [i for i in top if i in probed]
