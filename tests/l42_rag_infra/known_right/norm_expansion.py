"""Correct alternatives computed the way BLAS-backed libraries do: ‖v‖² − 2·v·q + ‖q‖² for every distance, a
stable argsort, and cells assigned from ‖c‖² − 2·v·c (‖v‖² does not change which centroid is nearest)."""

MODULE = "rag"
ACCEPTED = ["brute_force_knn", "ivf_search"]


def _dists(vs, q):
    return (vs * vs).sum(axis=1) - 2.0 * (vs @ q) + float(q @ q)


def brute_force_knn(query, vectors, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    return [int(i) for i in np.argsort(_dists(vs, q), kind="stable")[:k]]


def ivf_search(query, vectors, centroids, nprobe, k):
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    cs = _matrix("centroids", centroids, len(q))
    nprobe = check_int("nprobe", nprobe, 1)
    if nprobe > len(cs):
        raise ValueError(f"nprobe {nprobe} exceeds the number of lists ({len(cs)} centroids)")
    k = check_int("k", k, 1)
    owner = ((cs * cs).sum(axis=1)[None, :] - 2.0 * (vs @ cs.T)).argmin(axis=1)  # ‖v‖² is the same for every c
    probed = np.argsort(_dists(cs, q), kind="stable")[:nprobe]
    ids = np.flatnonzero(np.isin(owner, probed))
    d = _dists(vs[ids], q)
    return [int(i) for i in ids[np.lexsort((ids, d))][:k]]
