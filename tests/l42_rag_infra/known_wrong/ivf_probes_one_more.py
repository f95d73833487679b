"""Classic bug: off by one in the probe count (centroids[:nprobe + 1]): one list more than asked."""

MODULE = "rag"
REJECTED_BY = {"ivf_search": ["correctness"]}

_correct_ivf_search = ivf_search


def ivf_search(query, vectors, centroids, nprobe, k):
    _correct_ivf_search(query, vectors, centroids, nprobe, k)
    return _correct_ivf_search(query, vectors, centroids, min(nprobe + 1, len(centroids)), k)
