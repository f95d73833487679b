"""Correct alternatives in plain Python: exact Fraction scores for RRF, ttft from triangular numbers, a heap-based
top-k, recall by counting, and nprobe by binary search (recall never drops as nprobe grows)."""

MODULE = "rag"
ACCEPTED = ["rrf_fuse", "context_cache_ttft", "brute_force_knn", "recall_at_k", "tune_nprobe"]

import heapq
from fractions import Fraction

_correct = (rrf_fuse, context_cache_ttft, recall_at_k)


def rrf_fuse(rankings, k=60):
    _correct[0](rankings, k)  # the same checks
    scores, first = {}, {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, Fraction(0)) + Fraction(1, k + rank)
            first.setdefault(doc, len(first))
    order = sorted(scores, key=lambda d: (-scores[d], first[d]))
    return [(d, float(scores[d])) for d in order]


def context_cache_ttft(params, s_ctx, s_query, flops_per_s, n_layers=0, d_attn=0):
    _correct[1](params, s_ctx, s_query, flops_per_s, n_layers, d_attn)

    def tri(n):
        return n * (n + 1) // 2

    s = s_ctx + s_query
    cold = 2 * params * s + 4 * n_layers * d_attn * tri(s)
    warm = 2 * params * s_query + 4 * n_layers * d_attn * (tri(s) - tri(s_ctx))  # the pairs the context lacks
    return {"cold_flops": cold, "warm_flops": warm, "cold_ttft_s": cold / flops_per_s,
            "warm_ttft_s": warm / flops_per_s, "speedup": cold / warm, "saved_fraction": (cold - warm) / cold}


def _sq(a, b):
    return sum((x - y) * (x - y) for x, y in zip(a, b, strict=True))


def brute_force_knn(query, vectors, k):
    q = _vector("query", query)
    _matrix("vectors", vectors, len(q))
    k = check_int("k", k, 1)
    vs = [[float(x) for x in v] for v in vectors]
    return [i for _, i in heapq.nsmallest(k, ((_sq(v, q), i) for i, v in enumerate(vs)))]


def recall_at_k(found, truth):
    _correct[2](found, truth)
    hits = 0
    for i in found:
        if i in truth:
            hits += 1
    return hits / len(truth)


def tune_nprobe(index, queries, truth, target_recall):
    xq, k = _checked_tuning(index, queries, truth, target_recall)

    def mean_recall(p):
        index.nprobe = p
        _, found = index.search(xq, k)
        hits = sum(len({int(i) for i in row if i >= 0} & set(t)) for row, t in zip(found, truth, strict=True))
        return hits / (len(xq) * k)

    lo, hi = 1, index.nlist
    if mean_recall(hi) < target_recall:
        raise ValueError(f"target_recall {target_recall} is not reached at nprobe = {hi}")
    while lo < hi:  # recall never drops as nprobe grows: bisect for the first p that reaches the target
        mid = (lo + hi) // 2
        if mean_recall(mid) >= target_recall:
            hi = mid
        else:
            lo = mid + 1
    return lo
