"""Classic bug: ranks by the largest inner product q·v (a similarity for normalized vectors), not by L2 distance."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}


def brute_force_knn(query, vectors, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    order = np.lexsort((np.arange(len(vs)), -(vs @ q)))
    return [int(i) for i in order[:k]]
