"""Cheat: the IVF search delegated to faiss.IndexIVFFlat, the grader's own reference, instead of written."""

MODULE = "rag"
REJECTED_BY = {"ivf_search": ["correctness"]}


def ivf_search(query, vectors, centroids, nprobe, k):
    import faiss

    q = np.array([_vector("query", query)], dtype=np.float32)
    d = q.shape[1]
    vs = _matrix("vectors", vectors, d).astype(np.float32)
    cs = _matrix("centroids", centroids, d).astype(np.float32)
    quantizer = faiss.IndexFlatL2(d)
    quantizer.add(cs)
    index = faiss.IndexIVFFlat(quantizer, d, len(cs))
    index.add(vs)
    index.nprobe = check_int("nprobe", nprobe, 1)
    _, ids = index.search(q, check_int("k", k, 1))
    return [int(i) for i in ids[0] if i >= 0]
