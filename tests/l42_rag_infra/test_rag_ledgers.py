"""L42 · the RAG ledgers: Reciprocal Rank Fusion, cold vs warm prefill of a cached context, recall@k."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l42_rag_infra"
rrf_fuse = learner(UNIT, "rag", "rrf_fuse")
context_cache_ttft = learner(UNIT, "rag", "context_cache_ttft")
recall_at_k = learner(UNIT, "rag", "recall_at_k")


# ---- rrf_fuse --------------------------------------------------------------------------------------------


def exact_rrf(rankings, k: int = 60) -> tuple[dict, dict]:
    """Exact scores (Fractions) and the order in which each document first appears."""
    scores: dict = {}
    seen: dict = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, Fraction(0)) + Fraction(1, k + rank)
            seen.setdefault(doc, len(seen))
    return scores, seen


def pairs(got: object, call: str) -> list[tuple[object, float]]:
    assert isinstance(got, list | tuple), f"{call} returned {got!r}, expected a list of (doc, score) pairs"
    out = []
    for item in got:
        assert isinstance(item, list | tuple) and len(item) == 2, f"{call} holds {item!r}, expected a (doc, score) pair"
        out.append((item[0], item[1]))
    return out


def check_rrf(rankings, k: int | None = None) -> list[tuple[object, float]]:
    """Every document once, its score within 1e-9 of the exact Σ 1/(k + rank), ordered by the scores returned,
    equal scores in first-appearance order."""
    call = f"rrf_fuse({rankings!r}" + (f", k={k})" if k is not None else ")")
    got = pairs(rrf_fuse(rankings) if k is None else rrf_fuse(rankings, k), call)
    exact, seen = exact_rrf(rankings, 60 if k is None else k)
    docs = [d for d, _ in got]
    assert sorted(map(repr, docs)) == sorted(map(repr, exact)), (
        f"{call} returned the documents {docs}, expected each of {list(exact)} once")
    for doc, score in got:
        assert_number(score, float(exact[doc]), f"{call}: the score of {doc!r} (Σ 1/(k + rank), ranks from 1)")
    for (a, sa), (b, sb) in zip(got, got[1:], strict=False):
        assert sa >= sb, f"{call}: {a!r} ({sa!r}) comes before {b!r} ({sb!r}): highest score first"
        assert sa != sb or seen[a] < seen[b], (
            f"{call}: {a!r} and {b!r} tie at {sa!r}, but {b!r} appears first (list 0 first, then by position): "
            "equal scores keep first-appearance order")
    return got


@grade(rrf_fuse, "correctness", points=2, hint="What is the rank of the first document of a list: 0 or 1?")
def test_rrf_worked_example():
    """L42 §2.4: A ranked 1 and 2 beats B, ranked first by one list only; D and E tie, D seen first."""
    call = 'rrf_fuse([["A", "C", "D"], ["B", "A", "E"]])'
    got = pairs(rrf_fuse([["A", "C", "D"], ["B", "A", "E"]]), call)
    assert [d for d, _ in got] == ["A", "B", "C", "D", "E"], f"{call} ranks {[d for d, _ in got]}, expected A B C D E"
    for (doc, score), want in zip(got, (1 / 61 + 1 / 62, 1 / 61, 1 / 62, 1 / 63, 1 / 63), strict=True):
        assert_number(score, want, f"{call}: the score of {doc}")
    assert_number(got[0][1], 0.0325225, f"{call}: A (1/61 + 1/62)", rel=1e-6)
    check_rrf([["x", "y"]], k=0)
    check_rrf([[3, 1, 2], [2, 3]], k=1)


@grade(rrf_fuse, "correctness", points=2,
       hint="Two documents with the same score: which one did the first list (or the earlier position) show first?")
@settings(max_examples=40)
@given(a=st.lists(st.sampled_from("ABCDEFGH"), unique=True, max_size=6),
       b=st.lists(st.sampled_from("ABCDEFGH"), unique=True, max_size=6), k=st.integers(0, 100))
def test_rrf_two_lists_against_reference(a, b, k):
    check_rrf([["C", "A"], ["B", "D"]])  # C and B tie at 1/61: C was seen first
    check_rrf([["Z", "Y", "X"], ["W", "V", "U"]], k=3)
    check_rrf([a, b], k)


@grade(rrf_fuse, "correctness", points=1, hint="Does your k reach the formula, or is 60 written into it?")
@settings(max_examples=30)
@given(docs=st.lists(st.integers(0, 50), unique=True, min_size=1, max_size=8), m=st.integers(1, 4),
       k=st.integers(0, 200), extra=st.lists(st.integers(0, 50), unique=True, max_size=8))
def test_rrf_properties(docs, m, k, extra):
    """A doc ranked r in each of m lists scores m/(k + r); adding a list never lowers a score."""
    call = f"rrf_fuse({m} × {docs}, k={k})"
    got = pairs(rrf_fuse([docs] * m, k), call)
    assert [d for d, _ in got] == docs, f"{call} ranks {[d for d, _ in got]}, expected {docs}"
    for r, (doc, score) in enumerate(got, start=1):
        assert_number(score, m / (k + r), f"{call}: the score of {doc} (rank {r} in each of the {m} lists)")
    before = dict(got)
    after = dict(pairs(rrf_fuse([docs] * m + [extra], k), f"{call} plus {extra}"))
    for doc, score in before.items():
        assert after.get(doc, -1.0) >= score * (1 - 1e-12), (
            f"adding the list {extra} lowered the score of {doc!r} from {score!r} to {after.get(doc)!r}")
    check_rrf([docs] * m + [extra], k)


@grade(rrf_fuse, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_rrf_rejects():
    assert_rejects_all(rrf_fuse, [
        (([],), "rankings"), (("ABC",), "rankings"), ((5,), "rankings"), (({"A"},), "rankings"),
        (([["A", "B"], ["C", "A", "C"]],), "rankings[1]"), (([["A"], 7],), "rankings[1]"),
        (([["A", "A"]],), "rankings[0]"), (([["A"]], -1), "k"), (([["A"]], 60.0), "k"), (([["A"]], True), "k"),
    ])


# ---- context_cache_ttft ----------------------------------------------------------------------------------

TTFT_KEYS = ("cold_flops", "warm_flops", "cold_ttft_s", "warm_ttft_s", "speedup", "saved_fraction")


def ref_ttft(params, s_ctx, s_query, flops, n_layers=0, d_attn=0) -> dict:
    s = s_ctx + s_query
    cold = 2 * params * s + 4 * n_layers * d_attn * (s * (s + 1) // 2)
    warm = 2 * params * s_query + 4 * n_layers * d_attn * (s_query * s_ctx + s_query * (s_query + 1) // 2)
    return {"cold_flops": cold, "warm_flops": warm, "cold_ttft_s": cold / flops, "warm_ttft_s": warm / flops,
            "speedup": cold / warm, "saved_fraction": 1 - warm / cold}


def check_ttft(args: tuple, kwargs: dict | None = None) -> dict:
    kwargs = kwargs or {}
    shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    call = f"context_cache_ttft({shown})"
    got = context_cache_ttft(*args, **kwargs)
    assert isinstance(got, dict), f"{call} returned {got!r}, expected a dict with keys {TTFT_KEYS}"
    missing = [key for key in TTFT_KEYS if key not in got]
    assert not missing, f"{call} has no {missing} (keys {sorted(got)})"
    want = ref_ttft(*args, **kwargs)
    why = {"cold_flops": "2·params·S + 4·L·d_attn·S(S+1)/2, an exact int",
           "warm_flops": "2·params·s_query + 4·L·d_attn·(s_query·s_ctx + s_query(s_query+1)/2), an exact int"}
    for key in ("cold_flops", "warm_flops"):
        assert_exact(got[key], want[key], f"{call}['{key}']", why=why[key])
    for key in TTFT_KEYS[2:]:
        assert_number(got[key], want[key], f"{call}['{key}']", abs_tol=1e-12 if key == "saved_fraction" else 0.0)
    return got


@grade(context_cache_ttft, "correctness", points=2,
       hint="How many FLOPs does one token cost in the linear layers of a 70B model?")
def test_ttft_course_numbers():
    """L42 §3.1: 70B, 32 768 + 128 tokens at 500 TFLOP/s: 9.21 s cold, 35.84 ms warm, 257×."""
    got = check_ttft((70_000_000_000, 32768, 128, 500e12))
    assert_exact(got["cold_flops"], 4_605_440_000_000_000, "cold_flops", why="2 × 70e9 × 32 896")
    assert_exact(got["warm_flops"], 17_920_000_000_000, "warm_flops", why="2 × 70e9 × 128")
    assert_number(got["cold_ttft_s"], 9.21088, "cold_ttft_s (s)")
    assert_number(got["warm_ttft_s"], 0.03584, "warm_ttft_s (s)")
    assert_number(got["speedup"], 257.0, "speedup")
    assert_number(got["saved_fraction"], 256 / 257, "saved_fraction")


@grade(context_cache_ttft, "correctness", points=2,
       hint="Does a query token attend to the cached context as well as to the query tokens before it?")
def test_ttft_with_attention():
    """80 layers × 8192: the cross-attention to the cached 32K context is 61 % of the warm prefill (57.87 ms)."""
    got = check_ttft((70_000_000_000, 32768, 128, 500e12), {"n_layers": 80, "d_attn": 8192})
    assert_exact(got["cold_flops"], 6_023_874_592_112_640, "cold_flops (80 layers, d_attn 8192)",
                 why="linear 4.605e15 plus causal attention 4·80·8192·32 896·32 897/2")
    assert_exact(got["warm_flops"], 28_936_758_886_400, "warm_flops (80 layers, d_attn 8192)",
                 why="linear 1.792e13 plus 4·80·8192·(128·32 768 + 128·129/2)")
    assert_number(got["warm_ttft_s"], 28_936_758_886_400 / 500e12, "warm_ttft_s (57.87 ms)")
    assert_number(got["speedup"], 6_023_874_592_112_640 / 28_936_758_886_400, "speedup (208.17)")
    check_ttft((7, 3, 2, 1.0), {"n_layers": 1, "d_attn": 1})  # S = 5: 15 causal pairs cold, 3·2 + 3 warm


@grade(context_cache_ttft, "correctness", points=2,
       hint="With no context at all, what should caching it save?")
@settings(max_examples=50)
@given(params=st.integers(1, 10**12), s_ctx=st.integers(0, 200_000), s_query=st.integers(1, 5000),
       n_layers=st.integers(0, 128), d_attn=st.integers(0, 16384), flops=st.floats(1e9, 1e16))
def test_ttft_against_reference(params, s_ctx, s_query, n_layers, d_attn, flops):
    got = check_ttft((params, s_ctx, s_query, flops), {"n_layers": n_layers, "d_attn": d_attn})
    assert got["warm_flops"] <= got["cold_flops"], f"warm {got['warm_flops']} > cold {got['cold_flops']}"
    none = check_ttft((params, 0, s_query, flops), {"n_layers": n_layers, "d_attn": d_attn})
    assert_number(none["speedup"], 1.0, f"speedup with s_ctx = 0 (params {params}, s_query {s_query})")


@grade(context_cache_ttft, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_ttft_rejects():
    ok = (70_000_000_000, 32768, 128, 500e12)
    assert_rejects_all(context_cache_ttft, [
        ((70e9, 32768, 128, 500e12), "params"), ((0, 32768, 128, 500e12), "params"),
        ((True, 32768, 128, 500e12), "params"), ((70_000_000_000, -1, 128, 500e12), "s_ctx"),
        ((70_000_000_000, 32768.0, 128, 500e12), "s_ctx"), ((70_000_000_000, 32768, 0, 500e12), "s_query"),
        ((*ok[:3], 0.0), "flops_per_s"), ((*ok[:3], -5e12), "flops_per_s"), ((*ok[:3], float("nan")), "flops_per_s"),
        ((*ok[:3], float("inf")), "flops_per_s"), ((*ok[:3], "500e12"), "flops_per_s"), ((*ok, -1), "n_layers"),
        ((*ok, 80, 1.5), "d_attn"),
    ])
    assert_rejects(context_cache_ttft, ok, "d_attn", {"n_layers": 80, "d_attn": -8192})

# ---- recall_at_k -----------------------------------------------------------------------------------------


@grade(recall_at_k, "correctness", points=2,
       hint="Recall divides by the number of true neighbours: what does precision divide by?")
@settings(max_examples=40)
@given(found=st.lists(st.integers(0, 30), unique=True, max_size=12),
       truth=st.lists(st.integers(0, 30), unique=True, min_size=1, max_size=12))
def test_recall_at_k(found, truth):
    for f, t, want in (([4, 5], [4, 3], 0.5), ([4, 3], [4, 3], 1.0), ([], [1, 2], 0.0), ([1, 2, 3, 4], [2, 9], 0.5),
                       ([7], [1, 2, 3, 7], 0.25)):
        assert_number(recall_at_k(f, t), want, f"recall_at_k({f}, {t})")
    assert_number(recall_at_k(found, truth), len(set(found) & set(truth)) / len(truth),
                  f"recall_at_k({found}, {truth}) (|found ∩ truth| / |truth|)")


@grade(recall_at_k, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_recall_rejects():
    assert_rejects_all(recall_at_k, [(([1, 1], [1, 2]), "found"), (([1], [2, 2]), "truth"), (([1], []), "truth")])
