"""Cheat: the exact search delegated to faiss.IndexFlatL2, the grader's own reference, instead of written."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}


def brute_force_knn(query, vectors, k):
    import faiss

    q = np.array([_vector("query", query)], dtype=np.float32)
    vs = _matrix("vectors", vectors, q.shape[1]).astype(np.float32)
    k = check_int("k", k, 1)
    index = faiss.IndexFlatL2(q.shape[1])
    index.add(vs)
    _, ids = index.search(q, min(k, len(vs)))
    return [int(i) for i in ids[0]]
