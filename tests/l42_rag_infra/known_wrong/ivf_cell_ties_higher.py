"""Classic bug: a vector equally far from two centroids goes to the higher one (argmin over reversed centroids)."""

MODULE = "rag"
REJECTED_BY = {"ivf_search": ["correctness"]}


def ivf_search(query, vectors, centroids, nprobe, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    cs = _matrix("centroids", centroids, len(q))
    nprobe = check_int("nprobe", nprobe, 1)
    if nprobe > len(cs):
        raise ValueError(f"nprobe {nprobe} exceeds the number of lists ({len(cs)} centroids)")
    k = check_int("k", k, 1)
    dc = ((vs[:, None, :] - cs[None, :, :]) ** 2).sum(axis=2)
    owner = len(cs) - 1 - dc[:, ::-1].argmin(axis=1)
    probed = np.argsort(((cs - q) ** 2).sum(axis=1), kind="stable")[:nprobe]
    ids = np.flatnonzero(np.isin(owner, probed))
    dist = ((vs[ids] - q) ** 2).sum(axis=1)
    return [int(i) for i in ids[np.lexsort((ids, dist))][:k]]
