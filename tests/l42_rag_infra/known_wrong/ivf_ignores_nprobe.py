"""Classic bug: every list scanned whatever nprobe says: brute force, with no recall lost and no bytes saved."""

MODULE = "rag"
REJECTED_BY = {"ivf_search": ["correctness"]}

_correct_ivf_search = ivf_search


def ivf_search(query, vectors, centroids, nprobe, k):
    _correct_ivf_search(query, vectors, centroids, nprobe, k)  # the same validation
    return _correct_ivf_search(query, vectors, centroids, len(centroids), k)
