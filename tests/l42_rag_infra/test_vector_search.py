"""L42 · exact and IVF vector search, written without faiss and held against faiss's IndexFlatL2 and IndexIVFFlat."""

from __future__ import annotations

import functools
import importlib.util
import random
import sys
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_number, assert_rejects_all, grade, learner, where_learner_runs

UNIT = "l42_rag_infra"
brute_force_knn = learner(UNIT, "rag", "brute_force_knn", audited=True)
ivf_search = learner(UNIT, "rag", "ivf_search", audited=True)

# The lecture's tiny example: two cells around x = 0 and x = 10, a query at x = 5.2 near the boundary.
VECS = [(1, 0), (0, 2), (-1, -1), (4, 0), (6, 0), (9, 1), (11, -1), (10, 3)]
CENTS = [(0, 0), (10, 0)]
QUERY = (5.2, 0)


def faiss_module():
    """faiss, imported only by the tests that hold the learner against it (or build an index)."""
    import faiss

    faiss.omp_set_num_threads(1)  # searches of a few hundred vectors: OpenMP's threads cost more than they save
    return faiss


# ---- the searches, run beside the learner's code with faiss refused -----------------------------------------

SEARCHES = {"brute_force_knn": brute_force_knn, "ivf_search": ivf_search}


def _ids_or_complaint(got: object) -> list[int] | str:
    if isinstance(got, list | tuple | np.ndarray) and all(
        isinstance(i, int | np.integer) and not isinstance(i, bool | np.bool_) for i in got
    ):
        return [int(i) for i in got]
    return f"{got!r} (expected a list of int indices)"


def search_without_faiss(name: str, calls: list[tuple]) -> list[list[int] | str]:
    """Beside the learner's code: each call of ``name``, with a profile hook that notes any faiss code it runs.

    Python frames from faiss's package and C functions of its extension both count: faiss is the grader's
    reference for these two exercises, so the learner writes the search itself.
    """
    spec = importlib.util.find_spec("faiss")
    roots = tuple(spec.submodule_search_locations or ()) if spec else ()
    touched: list[str] = []

    def watch(frame, event, arg):
        if touched:
            return
        if event == "call" and roots and frame.f_code.co_filename.startswith(roots):
            touched.append(f"faiss's {frame.f_code.co_qualname}()")
        elif event == "c_call" and str(getattr(arg, "__module__", None) or "").startswith("faiss"):
            touched.append(f"faiss's {getattr(arg, '__qualname__', arg)!s}()")

    fn = SEARCHES[name]
    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        out = [fn(*call) for call in calls]
    finally:
        sys.setprofile(previous)
    if touched:
        raise AssertionError(
            f"{name} ran {touched[0]}: faiss is the grader's reference for this exercise; write the search "
            "yourself (Python or NumPy: squared distances, then the k smallest)"
        )
    return [_ids_or_complaint(got) for got in out]


def run_searches(name: str, calls: list[tuple]) -> list[list[int]]:
    outs = where_learner_runs(search_without_faiss, name, calls)
    for call, got in zip(calls, outs, strict=True):
        assert not isinstance(got, str), f"{name}{short(call)} returned {got}"
    return outs


def short(call: tuple) -> str:
    """A call's arguments, long vector lists elided."""
    shown = []
    for a in call:
        if isinstance(a, list | tuple) and len(a) > 10:
            shown.append(f"[{len(a)} vectors]")
        elif isinstance(a, list | tuple) and a and isinstance(a[0], float):
            shown.append("(" + ", ".join(f"{x:.4g}" for x in a) + ")")
        else:
            shown.append(repr(a))
    return "(" + ", ".join(shown) + ")"


# ---- reference models (exact: Fractions of the floats given) -------------------------------------------------


def d2(a, b) -> Fraction:
    return sum(((Fraction(x) - Fraction(y)) ** 2 for x, y in zip(a, b, strict=True)), Fraction(0))


def ref_knn(query, vectors, k: int) -> list[int]:
    dist = [d2(v, query) for v in vectors]
    return sorted(range(len(vectors)), key=lambda i: (dist[i], i))[:k]


def ref_ivf(query, vectors, centroids, nprobe: int, k: int) -> tuple[list[int], list[int], list[int]]:
    """(answer, probed list ids, owner list of every vector)."""
    owner = [min(range(len(centroids)), key=lambda c, v=v: (d2(v, centroids[c]), c)) for v in vectors]
    probed = sorted(range(len(centroids)), key=lambda c: (d2(query, centroids[c]), c))[:nprobe]
    held = [i for i in range(len(vectors)) if owner[i] in probed]
    return sorted(held, key=lambda i: (d2(query, vectors[i]), i))[:k], probed, owner

# ---- brute_force_knn -------------------------------------------------------------------------------------

TIES = [(2, 2), (1, 0), (0, -1), (-1, 0), (0, 1)]  # four at squared distance 1 from the origin


@grade(brute_force_knn, "correctness", points=2,
       hint="Four vectors at the same distance: which index comes first? And what if k exceeds the vectors?")
def test_brute_force_worked():
    calls = [(QUERY, VECS, 2), (QUERY, VECS, 20), ((0, 0), TIES, 3), ((0.0, 0.0), TIES, 5), ((1,), [(3,), (-1,)], 1)]
    wants = [[4, 3], [4, 3, 5, 0, 1, 7, 6, 2], [1, 2, 3], [1, 2, 3, 4, 0], [0]]
    why = ["squared distances 0.64 and 1.44", "k > n: all 8, nearest first", "ties: the lower index first",
           "ties: the lower index first, then the farther vector", "(3) and (-1) are both 2 away: index 0 first"]
    for call, got, want, w in zip(calls, run_searches("brute_force_knn", calls), wants, why, strict=True):
        assert got == want, f"brute_force_knn{short(call)} = {got}, expected {want} ({w})"


@functools.cache
def faiss_case() -> dict:
    """Seeded float32 data with no near-ties anywhere a result depends on (so faiss's float32 arithmetic and an
    exact search agree), a faiss IndexFlatL2 and an IndexIVFFlat whose quantizer holds the given centroids."""
    rng = np.random.default_rng(42)
    n, d, n_lists, nq, k_max, margin = 300, 8, 12, 12, 10, 1e-3
    cents = rng.standard_normal((n_lists, d)).astype(np.float32)
    c64 = cents.astype(np.float64)
    rows = []
    while len(rows) < n:  # no vector near a cell boundary
        v = rng.standard_normal(d).astype(np.float32)
        dc = np.sort(((c64 - v.astype(np.float64)) ** 2).sum(axis=1))
        if dc[1] - dc[0] > margin:
            rows.append(v)
    xb = np.array(rows)
    x64 = xb.astype(np.float64)
    owner = ((x64[:, None, :] - c64[None]) ** 2).sum(axis=2).argmin(axis=1)
    queries, answers = [], {}
    while len(queries) < nq:
        q = rng.standard_normal(d).astype(np.float32)
        dist = ((x64 - q.astype(np.float64)) ** 2).sum(axis=1)
        dc = ((c64 - q.astype(np.float64)) ** 2).sum(axis=1)
        order_c = np.argsort(dc)
        clear = bool(np.all(np.diff(dc[order_c]) > margin))
        per_probe = {}
        for nprobe in NPROBES + (n_lists,):
            held = np.flatnonzero(np.isin(owner, order_c[:nprobe]))
            top = held[np.argsort(dist[held])][: k_max + 1]
            clear = clear and bool(np.all(np.diff(dist[top]) > margin))
            per_probe[nprobe] = top[:k_max].tolist()
        if clear:
            answers[len(queries)] = per_probe
            queries.append(q)
    xq = np.array(queries)
    faiss = faiss_module()
    flat = faiss.IndexFlatL2(d)
    flat.add(xb)
    _, flat_ids = flat.search(xq, k_max)
    quantizer = faiss.IndexFlatL2(d)
    quantizer.add(cents)
    ivf = faiss.IndexIVFFlat(quantizer, d, n_lists)
    assert ivf.is_trained, "the quantizer holds every centroid: the IVF index needs no training"
    ivf.add(xb)
    ivf_ids = {}
    for nprobe in NPROBES:
        ivf.nprobe = nprobe
        _, found = ivf.search(xq, k_max)
        ivf_ids[nprobe] = [[int(i) for i in row if i >= 0] for row in found]
    for j in range(nq):  # the grader's own check: on this data faiss gives the exact answers
        assert flat_ids[j].tolist() == answers[j][n_lists], f"faiss IndexFlatL2 disagrees with the exact search ({j})"
        for nprobe in NPROBES:
            assert ivf_ids[nprobe][j] == answers[j][nprobe], f"faiss IndexIVFFlat disagrees (query {j}, {nprobe})"
    return {"xb": xb.tolist(), "cents": cents.tolist(), "xq": xq.tolist(), "flat": flat_ids.tolist(), "ivf": ivf_ids}


NPROBES = (1, 2, 4, 12)


@grade(brute_force_knn, "correctness", points=3,
       hint="faiss's IndexFlatL2 returns the nearest first: is your top-k sorted, and by distance, not similarity?")
def test_brute_force_matches_faiss_flat():
    """300 seeded float32 vectors (8-D), 12 queries, k 1, 4, 10: the ids faiss.IndexFlatL2 returns, in its order."""
    case = faiss_case()
    calls = [(q, case["xb"], k) for q in case["xq"] for k in (1, 4, 10)]
    for (q, _, k), got in zip(calls, run_searches("brute_force_knn", calls), strict=True):
        want = case["flat"][case["xq"].index(q)][:k]
        assert got == want, (
            f"brute_force_knn(query {case['xq'].index(q)}, 300 seeded vectors, k={k}) = {got}, expected {want} "
            "(faiss.IndexFlatL2: the k smallest squared L2 distances, nearest first)")


@st.composite
def int_vectors(draw, max_vectors: int = 25) -> tuple:
    d = draw(st.integers(1, 3))
    vec = st.tuples(*[st.integers(-4, 4)] * d)
    return draw(vec), draw(st.lists(vec, min_size=1, max_size=max_vectors)), vec


@grade(brute_force_knn, "correctness", points=2,
       hint="With integer coordinates many distances are equal: is your order by (distance, index)?")
@settings(max_examples=30)
@given(data=st.data())
def test_brute_force_against_reference(data):
    query, vectors, _ = data.draw(int_vectors())
    ks = sorted({1, data.draw(st.integers(1, len(vectors) + 3)), len(vectors)})
    calls = [(query, vectors, k) for k in ks]
    for call, got in zip(calls, run_searches("brute_force_knn", calls), strict=True):
        want = ref_knn(*call)
        assert got == want, f"brute_force_knn{short(call)} = {got}, expected {want} (by squared distance, then index)"


@grade(brute_force_knn, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_brute_force_rejects():
    assert_rejects_all(brute_force_knn, [
        ((QUERY, VECS, 0), "k"), ((QUERY, VECS, 2.0), "k"), ((QUERY, VECS, True), "k"),
        ((QUERY, [], 2), "vectors"), (((5.2, 0, 1), VECS, 2), "vectors[0]"),
        ((QUERY, [(1, 0), (0, 2, 5)], 1), "vectors[1]"), ((QUERY, [(1, 0), (float("nan"), 0)], 1), "vectors[1]"),
        (((), VECS, 1), "query"), (((float("inf"), 0), VECS, 1), "query"), (("ab", VECS, 1), "query"),
    ])


# ---- ivf_search ------------------------------------------------------------------------------------------


@grade(ivf_search, "correctness", points=2,
       hint="Vector 3 (x = 4) is nearer the query than vector 5: why can nprobe = 1 not find it?")
def test_ivf_worked():
    calls = [(QUERY, VECS, CENTS, 1, 2), (QUERY, VECS, CENTS, 2, 2), (QUERY, VECS, CENTS, 1, 10),
             ((0, 0), VECS, CENTS, 1, 3)]
    wants = [[4, 5], [4, 3], [4, 5, 7, 6], [0, 2, 1]]
    why = ["the query probes the cell of (10, 0) only: vector 3 sits in the other one",
           "both cells probed: the brute-force answer", "fewer than k: the probed cell holds 4 vectors",
           "the cell of (0, 0) holds vectors 0, 1, 2 and 3"]
    for call, got, want, w in zip(calls, run_searches("ivf_search", calls), wants, why, strict=True):
        assert got == want, f"ivf_search{short(call)} = {got}, expected {want} ({w})"


@grade(ivf_search, "correctness", points=3,
       hint="faiss probes the nprobe nearest centroids and ranks only what their lists hold: do you?")
def test_ivf_matches_faiss_ivfflat():
    """300 seeded float32 vectors, 12 given centroids, 12 queries, nprobe 1, 2, 4, 12, k 3 and 10: faiss's ids."""
    case = faiss_case()
    calls = [(q, case["xb"], case["cents"], p, k) for q in case["xq"] for p in NPROBES for k in (3, 10)]
    for (q, _, _, p, k), got in zip(calls, run_searches("ivf_search", calls), strict=True):
        want = case["ivf"][p][case["xq"].index(q)][:k]
        assert got == want, (
            f"ivf_search(query {case['xq'].index(q)}, 300 seeded vectors, 12 centroids, nprobe={p}, k={k}) = {got}, "
            f"expected {want} (faiss.IndexIVFFlat whose quantizer holds the centroids)")


@grade(ivf_search, "correctness", points=3,
       hint="A vector equally far from two centroids: which list holds it? And a query equally far from two?")
@settings(max_examples=30)
@given(data=st.data())
def test_ivf_against_reference(data):
    """Integer coordinates (ties everywhere); answers within the probed lists; nprobe = all lists is brute force."""
    query, vectors, vec = data.draw(int_vectors())
    centroids = data.draw(st.lists(vec, min_size=1, max_size=5))
    nprobe = data.draw(st.integers(1, len(centroids)))
    k = data.draw(st.integers(1, len(vectors) + 2))
    calls = [(query, vectors, centroids, nprobe, k), (query, vectors, centroids, len(centroids), k)]
    got, everything = run_searches("ivf_search", calls)
    want, probed, owner = ref_ivf(*calls[0])
    outside = [i for i in got if not 0 <= i < len(vectors) or owner[i] not in probed]
    assert not outside, (f"ivf_search{short(calls[0])} = {got}: {outside} are not in the probed lists {probed} "
                         f"(vector i is in the list of its nearest centroid, lower centroid on ties: {owner})")
    assert got == want, f"ivf_search{short(calls[0])} = {got}, expected {want} (probed lists {probed}, owners {owner})"
    brute = ref_knn(query, vectors, k)
    assert everything == brute, (f"ivf_search{short(calls[1])} = {everything}: probing every list is brute force, "
                                 f"expected {brute}")


@functools.cache
def lecture_seeded_case() -> tuple:
    """random.Random(0): 1000 × 8-D Gaussian vectors, centroids = vectors 0, 62, ..., 930, 50 Gaussian queries."""
    rng = random.Random(0)
    vectors = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(1000)]
    queries = [[rng.gauss(0, 1) for _ in range(8)] for _ in range(50)]
    centroids = vectors[0:931:62]
    v = np.array(vectors)
    truth = [np.lexsort((np.arange(1000), ((v - np.array(q)) ** 2).sum(axis=1)))[:10].tolist() for q in queries]
    return vectors, queries, centroids, truth


@grade(ivf_search, "correctness", points=2,
       hint="Probing more lists scans a superset of vectors: can recall ever drop as nprobe grows?")
def test_ivf_recall_curve_seeded():
    """Mean recall@10 over 50 queries: 0.478 at nprobe 1, 0.876 at 4 (1.0 at 16, all the lists: brute force)."""
    vectors, queries, centroids, truth = lecture_seeded_case()
    calls = [(q, vectors, centroids, p, 10) for p in (1, 4) for q in queries]
    outs = run_searches("ivf_search", calls)
    for j, (p, want) in enumerate(((1, 0.478), (4, 0.876))):
        found = outs[j * 50 : (j + 1) * 50]
        got = sum(len(set(f) & set(t)) for f, t in zip(found, truth, strict=True)) / 500
        assert_number(got, want, f"mean recall@10 of ivf_search at nprobe={p} (random.Random(0) data, 50 queries)")


@grade(ivf_search, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_ivf_rejects():
    assert_rejects_all(ivf_search, [
        ((QUERY, VECS, CENTS, 3, 2), "nprobe"), ((QUERY, VECS, CENTS, 0, 2), "nprobe"),
        ((QUERY, VECS, CENTS, 1.0, 2), "nprobe"), ((QUERY, VECS, CENTS, 1, 0), "k"),
        ((QUERY, VECS, [], 1, 2), "centroids"), ((QUERY, VECS, [(0, 0), (10, 0, 0)], 1, 2), "centroids[1]"),
        ((QUERY, VECS, [(0, float("nan"))], 1, 2), "centroids[0]"),
        ((QUERY, [(1, 0), (2,)], CENTS, 1, 2), "vectors[1]"), ((QUERY, [], CENTS, 1, 2), "vectors"),
        (((5.2,), VECS, CENTS, 1, 2), "vectors[0]"), (((), VECS, CENTS, 1, 2), "query"),
    ])
