"""L42 · RAG infrastructure: hybrid-retrieval fusion, the prefill a cached context saves, exact and IVF search.

Lecture 42 (08_Post-Training与相邻Infra/42_RAG与Agent基础设施_VectorDB_Context_Sandbox.md).

Three ledgers stand behind a RAG front end:

* **Fusion.** A dense retriever scores by cosine, BM25 by term statistics: the scores are not comparable,
  so Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009) uses ranks only,
  score(d) = Σ 1/(k + rank), k = 60. A document ranked well by both lists beats one ranked first by one.
* **Context caching.** A shared context prefix whose KV is cached costs its prefill once: a warm request
  pays the linear layers for its own query tokens and attention from them to the cached context.
* **IVF.** Brute force scans all N vectors (2·N·D FLOPs, N·D·4 bytes per query); an inverted file scans
  only the ``nprobe`` lists whose centroids are nearest to the query, and misses true neighbours that sit
  across a cell boundary until ``nprobe`` grows. Recall@k against brute force measures the loss, and an
  operator tunes ``nprobe`` on a real faiss index for a target recall.

Conventions: counts are exact ints (``check_int``); distances are squared L2; ties go to the lower index;
invalid arguments raise ValueError naming the argument (``vectors[3]``, ``rankings[1]``, ``nprobe`` ...).
``brute_force_knn`` and ``ivf_search`` are written with Python or NumPy: faiss is the grader's reference
for them, and the tests refuse a call into faiss from either. ``tune_nprobe`` drives a real faiss index.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# ---------------------------------------------------------------------------------------------
# Given: argument checks (a vector is a non-empty sequence of finite reals of the query's dimension)
# ---------------------------------------------------------------------------------------------


def _is_sequence(value: object) -> bool:
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


def _real(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool | np.bool_)


def _vector(name: str, value: object, dim: int | None = None) -> list[float]:
    """``value`` as a list of finite floats (of ``dim`` entries when given), or ValueError naming ``name``."""
    if not _is_sequence(value) or len(value) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of finite reals, got {value!r}")
    if not all(_real(x) and math.isfinite(x) for x in value):
        raise ValueError(f"{name} must hold finite reals only, got {value!r}")
    if dim is not None and len(value) != dim:
        raise ValueError(f"{name} has {len(value)} dimensions; the query has {dim}")
    return [float(x) for x in value]


def _matrix(name: str, rows: object, dim: int) -> np.ndarray:
    """``rows`` as an (n, dim) float64 array; ValueError naming ``name`` (empty) or ``name[i]`` (a bad row)."""
    if not _is_sequence(rows) or len(rows) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of vectors, got {rows!r}")
    try:  # the fast path: one array of finite reals of the right width
        fast = np.asarray(rows)
    except (TypeError, ValueError):  # ragged rows
        fast = None
    if fast is not None and fast.dtype.kind in "iuf" and fast.shape[1:] == (dim,) and np.isfinite(fast).all():
        return fast.astype(np.float64)
    return np.array([_vector(f"{name}[{i}]", row, dim) for i, row in enumerate(rows)], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# 1. Hybrid retrieval: Reciprocal Rank Fusion
# ---------------------------------------------------------------------------------------------


def rrf_fuse(rankings: Sequence[Sequence[Hashable]], k: int = 60) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists by Reciprocal Rank Fusion: score(doc) = Σ over the lists holding doc of 1/(k + rank).

    Ranks are 1-based. Every document appears once in the result, as ``(doc, score)``, by score
    descending; equal scores keep first-appearance order (list 0 first, then list 1 ..., and within a
    list by position). Scores are summed list by list, in list order.

    Worked (L42 §2.4, k = 60): dense ["A", "C", "D"], sparse ["B", "A", "E"] →
    A 1/61 + 1/62 = 0.0325225, B 1/61 = 0.0163934, C 1/62 = 0.0161290, D 1/63 = 0.0158730,
    E 1/63 = 0.0158730 (D before E: a tie, D was seen first).

    Errors: ``rankings`` empty, not a sequence, or a str → ValueError naming ``rankings``; a list that is
    not a sequence (or a str) or that holds a document twice → naming ``rankings[i]``; ``k`` an exact
    int ≥ 0 (``check_int``).
    """
    # TODO: validate, then add 1/(k + rank) per list with 1-based ranks; sort by score, stable for ties.
    ### BEGIN SOLUTION
    if not _is_sequence(rankings) or len(rankings) == 0:
        raise ValueError(f"rankings must be a non-empty sequence of ranked lists, got {rankings!r}")
    k = check_int("k", k, 0)
    scores: dict[Hashable, float] = {}
    for i, ranking in enumerate(rankings):
        if not _is_sequence(ranking):
            raise ValueError(f"rankings[{i}] must be a sequence of documents, got {ranking!r}")
        try:
            if len(set(ranking)) != len(ranking):
                raise ValueError(f"rankings[{i}] holds a document twice: {list(ranking)!r}")
        except TypeError:
            raise ValueError(f"rankings[{i}] holds an unhashable document: {list(ranking)!r}") from None
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    # dicts keep first-insertion order and sorted() is stable: ties stay in first-appearance order
    return sorted(scores.items(), key=lambda item: -item[1])
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Context caching: cold vs warm prefill
# ---------------------------------------------------------------------------------------------


def context_cache_ttft(
    params: int, s_ctx: int, s_query: int, flops_per_s: float, n_layers: int = 0, d_attn: int = 0
) -> dict[str, float | int]:
    """TTFT of a prompt of ``s_ctx`` context + ``s_query`` query tokens, cold vs with the context's KV cached.

    S = s_ctx + s_query. Linear layers: 2·params FLOPs per token. Attention: 4·n_layers·d_attn FLOPs per
    (query token, key token) pair (QKᵀ and PV, 2 FLOPs per multiply-add each), causal: a token attends to
    itself and every earlier token.

        cold_flops = 2·params·S + 4·L·d_attn·S(S+1)/2
        warm_flops = 2·params·s_query + 4·L·d_attn·(s_query·s_ctx + s_query(s_query+1)/2)

    Both are exact ints. ``cold_ttft_s``/``warm_ttft_s`` = flops / ``flops_per_s``; ``speedup`` = cold / warm;
    ``saved_fraction`` = 1 − warm / cold. ``n_layers = d_attn = 0`` gives the lecture's linear-only formulas.
    The time to fetch the cached KV is not modelled.

    Worked (70B, 32 768 + 128 tokens, 500 TFLOP/s): cold 4,605,440,000,000,000 FLOPs → 9.21088 s; warm
    17,920,000,000,000 → 35.84 ms; speedup 257.0; saved 0.9961089. With ``n_layers=80, d_attn=8192``:
    cold 6,023,874,592,112,640 → 12.0477 s, warm 28,936,758,886,400 → 57.87 ms, speedup 208.17.

    Returns ``{"cold_flops", "warm_flops", "cold_ttft_s", "warm_ttft_s", "speedup", "saved_fraction"}``.
    Errors: ``params``, ``s_query`` ints ≥ 1; ``s_ctx``, ``n_layers``, ``d_attn`` ints ≥ 0; ``flops_per_s`` a
    finite real > 0 (ValueError naming the argument).
    """
    # TODO: count both prefills in exact ints (causal pairs: n(n+1)/2), then the times and ratios.
    ### BEGIN SOLUTION
    p = check_int("params", params, 1)
    ctx = check_int("s_ctx", s_ctx, 0)
    sq = check_int("s_query", s_query, 1)
    n_layers = check_int("n_layers", n_layers, 0)
    d_attn = check_int("d_attn", d_attn, 0)
    if not _real(flops_per_s) or not math.isfinite(flops_per_s) or flops_per_s <= 0:
        raise ValueError(f"flops_per_s must be a finite real > 0 (FLOP/s), got {flops_per_s!r}")
    s = ctx + sq
    per_pair = 4 * n_layers * d_attn
    cold = 2 * p * s + per_pair * (s * (s + 1) // 2)
    warm = 2 * p * sq + per_pair * (sq * ctx + sq * (sq + 1) // 2)
    return {
        "cold_flops": cold,
        "warm_flops": warm,
        "cold_ttft_s": cold / flops_per_s,
        "warm_ttft_s": warm / flops_per_s,
        "speedup": cold / warm,
        "saved_fraction": 1 - warm / cold,
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Exact search and the inverted file
# ---------------------------------------------------------------------------------------------


def brute_force_knn(query: Sequence[float], vectors: Sequence[Sequence[float]], k: int) -> list[int]:
    """The indices of the ``k`` vectors nearest to ``query`` (squared L2), nearest first; all of them if k > n.

    Equal distances → the lower index first. Write the scan (Python or NumPy): faiss is the grader's
    reference here, and a call into faiss is refused.

    Worked: VECS = [(1, 0), (0, 2), (-1, -1), (4, 0), (6, 0), (9, 1), (11, -1), (10, 3)], query (5.2, 0),
    k = 2 → [4, 3] (squared distances 0.64 and 1.44).

    Errors: ``query`` not a non-empty sequence of finite reals; ``vectors`` empty; ``vectors[i]`` not finite
    or of another dimension than the query; ``k`` not an int ≥ 1 (ValueError naming the argument).
    """
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    # TODO: the squared distance of every vector, then the k smallest in order (ties: lower index first).
    ### BEGIN SOLUTION
    dist = ((vs - q) ** 2).sum(axis=1)
    order = np.lexsort((np.arange(len(dist)), dist))  # by distance, then by index
    return [int(i) for i in order[:k]]
    ### END SOLUTION


def ivf_search(
    query: Sequence[float],
    vectors: Sequence[Sequence[float]],
    centroids: Sequence[Sequence[float]],
    nprobe: int,
    k: int,
) -> list[int]:
    """Search an inverted file (IVF-Flat) with the given ``centroids``: the k nearest among the probed lists.

    Vector i belongs to the list of argmin_c ‖v_i − c‖² (ties → lower c). The query probes the ``nprobe``
    lists whose centroids are nearest to it (ties → lower c) and returns the ``k`` nearest vectors among
    them (squared L2, ties → lower id), fewer if the probed lists hold fewer than k. No faiss here.

    Worked: VECS as in :func:`brute_force_knn`, CENTS = [(0, 0), (10, 0)], query (5.2, 0), k = 2:
    nprobe = 1 → [4, 5] (vector 3 at x = 4 sits in the other cell: a true neighbour missed, recall 0.5);
    nprobe = 2 → [4, 3], the brute-force answer.

    Errors: as :func:`brute_force_knn`, plus ``centroids`` empty, ``centroids[i]`` not finite or of another
    dimension, ``nprobe`` not an int with 1 ≤ nprobe ≤ len(centroids).
    """
    q = np.array(_vector("query", query))
    vs = _matrix("vectors", vectors, len(q))
    cs = _matrix("centroids", centroids, len(q))
    nprobe = check_int("nprobe", nprobe, 1)
    if nprobe > len(cs):
        raise ValueError(f"nprobe {nprobe} exceeds the number of lists ({len(cs)} centroids)")
    k = check_int("k", k, 1)
    # TODO: assign every vector to its nearest centroid, probe the nprobe nearest lists, rank what they hold.
    ### BEGIN SOLUTION
    diff = vs[:, None, :] - cs[None, :, :]  # (n, n_lists, d)
    owner = np.einsum("ncd,ncd->nc", diff, diff).argmin(axis=1)  # argmin: the lowest c on ties
    to_query = ((cs - q) ** 2).sum(axis=1)
    probed = np.argsort(to_query, kind="stable")[:nprobe]
    ids = np.flatnonzero(np.isin(owner, probed))  # ascending ids
    dist = ((vs[ids] - q) ** 2).sum(axis=1)
    return [int(i) for i in ids[np.lexsort((ids, dist))][:k]]
    ### END SOLUTION


def recall_at_k(found: Sequence[int], truth: Sequence[int]) -> float:
    """Recall@k: |set(found) ∩ set(truth)| / len(truth), a float in [0, 1].

    Worked: found [4, 5], truth [4, 3] → 0.5. An empty ``found`` gives 0.0.
    Errors: a repeated id in ``found`` or ``truth``, or an empty ``truth`` → ValueError naming it.
    """
    # TODO: refuse repeated ids and an empty truth, then count the true neighbours found.
    ### BEGIN SOLUTION
    found, truth = list(found), list(truth)
    if len(set(found)) != len(found):
        raise ValueError(f"found repeats an id: {found!r}")
    if not truth:
        raise ValueError("truth is empty: recall needs at least one true neighbour")
    if len(set(truth)) != len(truth):
        raise ValueError(f"truth repeats an id: {truth!r}")
    return len(set(found) & set(truth)) / len(truth)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. Tuning nprobe on a real faiss index
# ---------------------------------------------------------------------------------------------


def _checked_tuning(index: object, queries: object, truth: object, target_recall: object) -> tuple[np.ndarray, int]:
    """The queries as a float32 (nq, d) array and k, after checking every argument of :func:`tune_nprobe`."""
    import faiss  # only this exercise needs faiss

    if not isinstance(index, faiss.IndexIVF):
        raise ValueError(f"index must be a faiss IndexIVF (IndexIVFFlat ...), got {type(index).__name__}")
    if not index.is_trained or index.ntotal == 0:
        raise ValueError("index must be trained and hold vectors (train it, then add the database)")
    try:
        xq = np.ascontiguousarray(queries, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"queries must be an (nq, d) array of reals, got {type(queries).__name__}") from None
    if xq.ndim != 2 or xq.shape[0] == 0 or xq.shape[1] != index.d or not np.isfinite(xq).all():
        raise ValueError(f"queries must be a non-empty (nq, {index.d}) array of finite reals, got shape {xq.shape}")
    if not _is_sequence(truth) or len(truth) != len(xq):
        raise ValueError(f"truth must hold one list of true neighbour ids per query ({len(xq)})")
    lengths = set()
    for i, row in enumerate(truth):
        if not _is_sequence(row) or len(row) == 0 or len(set(row)) != len(row):
            raise ValueError(f"truth[{i}] must be a non-empty list of distinct ids, got {row!r}")
        lengths.add(len(row))
    if len(lengths) != 1:
        raise ValueError(f"truth rows must all hold k ids (one k for every query), got lengths {sorted(lengths)}")
    if not _real(target_recall) or not 0 < target_recall <= 1:
        raise ValueError(f"target_recall must be a real in (0, 1], got {target_recall!r}")
    return xq, lengths.pop()


def tune_nprobe(index: object, queries: object, truth: Sequence[Sequence[int]], target_recall: float) -> int:
    """The smallest ``nprobe`` at which a trained faiss IVF ``index`` reaches ``target_recall``.

    k = len(truth[i]) (the same for every query). For nprobe = p, search all ``queries`` (a float32
    (nq, d) array) with ``index.nprobe = p``, take recall@k of each query's ids against its ``truth`` row
    (faiss pads a short answer with -1: not an id), and average over the queries. Return the smallest p
    in 1 … index.nlist whose mean recall ≥ ``target_recall``. Recall never drops as p grows (more lists
    probed, a superset of candidates), so the first p that reaches the target is the answer.
    ``index.nprobe`` may be left changed.

    Errors: ``index`` not a trained, non-empty faiss IndexIVF; ``queries`` not (nq, index.d) finite;
    ``truth`` not one list of k distinct ids per query; ``target_recall`` not a real in (0, 1], or not
    reached even at nprobe = nlist (ValueError naming the argument).
    """
    xq, k = _checked_tuning(index, queries, truth, target_recall)
    # TODO: raise nprobe from 1 until the mean recall@k over the queries reaches the target (faiss pads with -1).
    ### BEGIN SOLUTION
    for p in range(1, index.nlist + 1):
        index.nprobe = p
        _, found = index.search(xq, k)
        recalls = [recall_at_k([int(i) for i in row if i >= 0], want) for row, want in zip(found, truth, strict=True)]
        mean = sum(recalls) / len(recalls)
        if mean >= target_recall:
            return p
    raise ValueError(f"target_recall {target_recall} is not reached even at nprobe = nlist = {index.nlist}")
    ### END SOLUTION
