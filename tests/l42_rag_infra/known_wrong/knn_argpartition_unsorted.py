"""Classic bug: np.argpartition finds the k nearest but leaves them unordered: the right set, not nearest first."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}


def brute_force_knn(query, vectors, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    dist = ((vs - q) ** 2).sum(axis=1)
    if k >= len(dist):
        return [int(i) for i in np.lexsort((np.arange(len(dist)), dist))]
    return [int(i) for i in np.argpartition(dist, k - 1)[:k]]
