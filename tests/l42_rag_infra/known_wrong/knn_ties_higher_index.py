"""Classic bug: equal distances broken toward the higher index (a max-heap of (-d, -i) popped in reverse)."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}


def brute_force_knn(query, vectors, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    dist = ((vs - q) ** 2).sum(axis=1)
    return [int(i) for i in np.lexsort((-np.arange(len(dist)), dist))[:k]]
