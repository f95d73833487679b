"""L42 · tuning nprobe on a real trained faiss IndexIVFFlat: the smallest nprobe that reaches a target recall."""

from __future__ import annotations

import functools

import numpy as np

from grader.kit import assert_exact, assert_rejects, grade, learner

UNIT = "l42_rag_infra"
tune_nprobe = learner(UNIT, "rag", "tune_nprobe")


def faiss_module():
    """faiss, imported only by the tests that hold the learner against it (or build an index)."""
    import faiss

    faiss.omp_set_num_threads(1)  # searches of a few hundred vectors: OpenMP's threads cost more than they save
    return faiss


# ---- tune_nprobe -----------------------------------------------------------------------------------------


@functools.cache
def tuning_case(n: int, d: int, nlist: int, nq: int, k: int, seed: int) -> tuple:
    """A trained faiss IndexIVFFlat on seeded data, the queries, their exact top-k, and mean recall per nprobe.

    nq·k is a power of two, so every mean recall is exact in binary whichever way it is summed."""
    faiss = faiss_module()
    rng = np.random.default_rng(seed)
    xb = rng.standard_normal((n, d)).astype(np.float32)
    xq = rng.standard_normal((nq, d)).astype(np.float32)
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, nlist)
    index.cp.min_points_per_centroid = 1  # small databases on purpose: no warning
    index.train(xb)
    index.add(xb)
    flat = faiss.IndexFlatL2(d)
    flat.add(xb)
    _, exact = flat.search(xq, k)
    truth = exact.tolist()
    curve = {}
    for p in range(1, nlist + 1):
        index.nprobe = p
        _, found = index.search(xq, k)
        curve[p] = sum(len(set(row.tolist()) & set(t)) for row, t in zip(found, truth, strict=True)) / (nq * k)
    index.nprobe = 1
    return index, xq, truth, curve


def check_tuning(case: tuple, target: float, what: str) -> int:
    index, xq, truth, curve = case
    faiss = faiss_module()
    want = min(p for p, r in curve.items() if r >= target)
    got = tune_nprobe(faiss.clone_index(index), xq, truth, target)
    shown = ", ".join(f"{p}: {r:g}" for p, r in curve.items() if p <= want + 2)
    assert_exact(got, want, f"tune_nprobe({what}, target_recall={target!r})",
                 why=f"the smallest nprobe whose mean recall@{len(truth[0])} reaches the target; recall by nprobe: "
                     f"{shown} ...")
    return got


def targets(curve: dict) -> list[float]:
    """Recall reached exactly at a step, a target between two steps, the first value and the best."""
    steps = [p for p in curve if p > 1 and curve[p] > curve[p - 1]]
    mid = steps[len(steps) // 2]
    return [curve[mid], (curve[mid - 1] + curve[mid]) / 2, curve[1], max(curve.values()), curve[steps[-1]]]


@grade(tune_nprobe, "correctness", points=3,
       hint="If nprobe = 5 gives exactly the target recall, is 5 enough? Is the target a mean or a worst case?")
def test_tune_nprobe_minimal():
    """2048 seeded 16-D vectors, 32 lists trained by faiss, 64 queries, k 8: each answer reaches the target and
    nprobe − 1 misses it."""
    case = tuning_case(2048, 16, 32, 64, 8, 7)
    curve = case[3]
    for target in targets(curve):
        got = check_tuning(case, target, "IVF32 over 2048 seeded vectors, 64 queries, k=8")
        assert curve[got] >= target and (got == 1 or curve[got - 1] < target)


@grade(tune_nprobe, "correctness", points=2,
       hint="When the probed lists hold fewer than k vectors, what does faiss put in the rest of the row?")
def test_tune_nprobe_short_lists():
    """256 vectors in 32 lists (8 on average) with k = 8: at small nprobe faiss pads rows with -1."""
    case = tuning_case(256, 8, 32, 32, 8, 11)
    for target in targets(case[3]):
        check_tuning(case, target, "IVF32 over 256 seeded vectors, 32 queries, k=8")


@grade(tune_nprobe, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_tune_nprobe_rejects():
    faiss = faiss_module()
    index, xq, truth, _ = tuning_case(256, 8, 32, 32, 8, 11)
    flat = faiss.IndexFlatL2(8)
    flat.add(xq)
    untrained = faiss.IndexIVFFlat(faiss.IndexFlatL2(8), 8, 4)
    elsewhere = [[1000 + 8 * j + i for i in range(8)] for j in range(32)]
    for args, name in [
        ((flat, xq, truth, 0.5), "index"), ((untrained, xq, truth, 0.5), "index"),
        ((index, xq[:, :4], truth, 0.5), "queries"), ((index, xq, truth[:-1], 0.5), "truth"),
        ((index, xq, [[5, 5, *row[2:]] for row in truth], 0.5), "truth"),
        ((index, xq, truth, 0.0), "target_recall"), ((index, xq, truth, 1.5), "target_recall"),
        ((index, xq, truth, float("nan")), "target_recall"), ((index, xq, truth, True), "target_recall"),
        ((index, xq, elsewhere, 0.5), "target_recall"),
    ]:
        assert_rejects(tune_nprobe, (faiss.clone_index(args[0]), *args[1:]), name)
