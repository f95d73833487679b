"""Classic bug: the distances sorted descending (as one would sort similarities): the farthest vectors come back."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}


def brute_force_knn(query, vectors, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    dist = ((vs - q) ** 2).sum(axis=1)
    order = np.lexsort((np.arange(len(dist)), -dist))
    return [int(i) for i in order[:k]]
