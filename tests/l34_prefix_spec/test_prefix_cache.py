"""L34 · chained block hashes and the prefix cache (ref counts, LRU eviction of free blocks, hit rate)."""

from __future__ import annotations

import contextlib

from hypothesis import example, given, settings
from hypothesis import strategies as st
from l34_reference import RefCache, chained_hashes

from grader.kit import assert_number, assert_rejects_all, grade, learner, where_learner_runs

UNIT = "l34_prefix_spec"
block_hashes = learner(UNIT, "prefix_cache", "block_hashes")
PrefixCache = learner(UNIT, "prefix_cache", "PrefixCache")

SYSTEM_PROMPT = [1001 + i % 50 for i in range(800)]  # course lab 6.1
R1 = SYSTEM_PROMPT + [201, 202, 203, 204, 205]
R2 = SYSTEM_PROMPT + [301, 302, 303]
R3 = R1 + [501, 502, 503, 504]


def as_list(x: object) -> object:
    """Lists and tuples alike, nested too: the contract names the items, not the sequence type."""
    return [as_list(v) for v in x] if isinstance(x, list | tuple) else x


# ---- block_hashes ---------------------------------------------------------------------------------


@grade(block_hashes, "correctness", points=3,
       hint="Blocks 0 and 25 of the course's system prompt hold the same 16 tokens: should their KV be shared?")
def test_block_hashes_worked():
    """range(40), B 16 → 2 hashes, the first aa330374288acbdc…; system-prompt blocks 0 and 25 differ."""
    got = block_hashes(range(40), 16)
    want = chained_hashes(list(range(40)), 16)
    assert isinstance(got, list | tuple) and len(got) == 2, (
        f"block_hashes(range(40), 16) = {got!r}: expected 2 hashes (40 // 16 full blocks; the partial block has none)")
    assert got[0].startswith("aa330374288acbdc"), (
        f"block_hashes(range(40), 16)[0] = {got[0]!r}, expected 'aa330374288acbdc…': sha256(32 zero bytes + the 16 "
        "tokens as 4-byte little-endian unsigned ints).hexdigest()")
    assert as_list(got) == want, f"block_hashes(range(40), 16) = {got}, expected {want} (chain the parent's raw digest)"
    sp = block_hashes(SYSTEM_PROMPT, 16)
    assert SYSTEM_PROMPT[:16] == SYSTEM_PROMPT[400:416]
    assert len(sp) == 50 and sp[0] != sp[25], (
        "block_hashes(system prompt, 16): blocks 0 and 25 hold the same tokens at different positions, so their KV "
        f"differs; got {'equal' if sp[0] == sp[25] else 'different'} hashes. Chain each hash through its parent's")
    assert as_list(sp) == chained_hashes(SYSTEM_PROMPT, 16), (
        "block_hashes(system prompt, 16) differs from the chained hashes")
    assert as_list(block_hashes([7] * 15, 16)) == [], (
        "block_hashes([7] * 15, 16): a partial block has no hash, expected []")


@grade(block_hashes, "correctness", points=2, hint="Is the parent digest fed as its 32 raw bytes, before the tokens?")
@settings(max_examples=25)
@given(tokens=st.lists(st.one_of(st.integers(0, 9), st.integers(0, 2**32 - 1)), max_size=70),
       b=st.sampled_from([1, 2, 3, 4, 16]))
@example(tokens=[1, 2, 3, 1, 2, 3, 2**32 - 1], b=3)
def test_block_hashes_match_the_chain(tokens, b):
    got = block_hashes(tokens, b)
    want = chained_hashes(tokens, b)
    assert got == want, f"block_hashes({tokens}, {b}) = {got}, expected {want}"


@grade(block_hashes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_block_hashes_rejects():
    assert_rejects_all(block_hashes, [(([1, 2], 0), "block_size"), (([1, -1], 2), "tokens"),
                                      (([1, 2**32], 2), "tokens"), (([1.0, 2], 2), "tokens"), (([1, 2], 2.0),
                                                                                                "block_size")])


# ---- PrefixCache ---------------------------------------------------------------------------------


def drive_cache(num_blocks: int, block_size: int, ops: list[tuple]) -> list[dict]:
    """Run ``ops`` on the learner's PrefixCache where its code runs; after each op, its answer and state."""
    cache = PrefixCache(num_blocks, block_size)
    trace = [{"hit_rate": cache.hit_rate()}]
    for op in ops:
        try:
            out = ("ok", cache.allocate(op[1], op[2]) if op[0] == "allocate" else cache.free(op[1]))
        except ValueError as err:
            out = ("ValueError", str(err))
        except RuntimeError as err:
            if type(err).__name__ != "NoFreeBlocks":
                raise
            out = ("NoFreeBlocks", None)
        tables = {}
        for r in sorted({o[1] for o in ops}):
            with contextlib.suppress(ValueError):
                tables[r] = cache.block_table(r)
        trace.append({"out": out, "tables": tables, "refs": [cache.ref_count(i) for i in range(num_blocks)],
                      "free": cache.num_free_blocks(), "cached": cache.cached_blocks(),
                      "counters": (cache.query_tokens, cache.hit_tokens, cache.evictions),
                      "hit_rate": cache.hit_rate()})
    return trace


def short(op: tuple) -> str:
    if op[0] == "free":
        return f".free({op[1]})"
    toks = list(op[2])
    shown = toks if len(toks) <= 12 else f"[{len(toks)} tokens: {toks[:4]}…{toks[-3:]}]"
    return f".allocate({op[1]}, {shown})"


def check_cache(num_blocks: int, block_size: int, ops: list[tuple], why: str = "") -> list[dict]:
    """Replay ``ops`` on the learner's cache and on the reference, comparing every answer and state."""
    trace = where_learner_runs(drive_cache, num_blocks, block_size, ops)
    assert trace[0]["hit_rate"] == 0.0, f"PrefixCache(...).hit_rate() = {trace[0]['hit_rate']!r} before any query: 0.0"
    ref = RefCache(num_blocks, block_size)
    for k, (op, got) in enumerate(zip(ops, trace[1:], strict=True)):
        call = f"PrefixCache({num_blocks}, {block_size})" + "".join(short(o) for o in ops[: k + 1][-4:])
        call = (f"{call} (op {k + 1} of {len(ops)}{'; ' + why if why else ''})")
        kind, value = ref.apply(op)
        gk, gv = got["out"]
        if kind == "ValueError":
            assert gk == "ValueError" and value in gv, (
                f"{call} gave {got['out']!r}: expected ValueError naming `{value}`")
        elif kind == "NoFreeBlocks":
            assert gk == "NoFreeBlocks", (
                f"{call} gave {got['out']!r}: expected NoFreeBlocks (the free queue, without the hit blocks it holds, "
                "is too short), with nothing changed")
        else:
            assert gk == "ok", f"{call} raised {gk}({gv!r}); expected it to return {value!r}"
            assert gv == value, (f"{call} returned {gv!r} cached prompt tokens, expected {value!r} (the longest run of "
                                 "cached full blocks, at most (len − 1) // B of them)")
        want = ref.state()
        assert got["tables"] == want["tables"], (
            f"{call}: block tables {got['tables']}, expected {want['tables']} (hits first, then blocks from the FRONT "
            "of the free queue; free() returns blocks tail first to its BACK)")
        assert got["refs"] == want["refs"], (
            f"{call}: ref_count per block {got['refs']}, expected {want['refs']} (one per table holding the block)")
        assert got["free"] == want["free"], f"{call}: num_free_blocks() = {got['free']}, expected {want['free']}"
        assert got["cached"] == want["cached"], (
            f"{call}: cached_blocks() has {len(got['cached'])} entries, expected {len(want['cached'])}; differing "
            f"hashes → blocks: { {h: got['cached'].get(h) for h in set(got['cached']) ^ set(want['cached'])} } "
            "(register new full blocks unless their hash is mapped; an evicted block drops its hash)")
        assert tuple(got["counters"]) == want["counters"], (
            f"{call}: (query_tokens, hit_tokens, evictions) = {tuple(got['counters'])}, expected {want['counters']}")
        assert_number(got["hit_rate"], want["hit_rate"], f"{call}.hit_rate()", rel=1e-12)
    return trace


@grade(PrefixCache, "correctness", points=3,
       hint="Request 2 shares 800 tokens with request 1: how many of them can come from cache, block by block?")
def test_prefix_cache_course_lab():
    """Lab 6.1 prompts (805, 803, 809 tokens; B 16): hits 0, 800, 800; hit rate 1600/2417; 53 blocks in use."""
    ops = [("allocate", 1, R1), ("allocate", 2, R2), ("allocate", 3, R3)]
    trace = check_cache(128, 16, ops, "course lab 6.1")
    assert [t["out"][1] for t in trace[1:]] == [0, 800, 800]
    assert abs(trace[-1]["hit_rate"] - 0.661978) < 5e-7 and trace[-1]["free"] == 128 - 53
    check_cache(128, 16, [*ops, ("free", 1), ("free", 2), ("free", 3), ("allocate", 4, R2 + [9] * 30)],
                "all freed, then a long follow-up of r2")


@grade(PrefixCache, "correctness", points=2,
       hint="An identical prompt is sent twice: which token's logits does the second request still need?")
def test_prefix_cache_keeps_the_last_token():
    """An identical 8-token prompt with B 4 hits 4 tokens, not 8; 9 tokens hit 8."""
    a = [5, 6, 7, 8, 9, 10, 11, 12]
    check_cache(8, 4, [("allocate", 0, a), ("allocate", 1, a)], "identical prompts: the last block is recomputed")
    check_cache(8, 4, [("allocate", 0, a), ("free", 0), ("allocate", 1, a + [13])], "one more token: both blocks hit")
    check_cache(8, 4, [("allocate", 0, a[:4]), ("allocate", 1, a[:4] + [0])], "a prompt of one full block")


A8 = [1, 2, 3, 4, 5, 6, 7, 8]
B8 = [11, 12, 13, 14, 15, 16, 17, 18]
C8 = [21, 22, 23, 24, 25, 26, 27, 28]
LRU_STORY = [("allocate", 0, A8), ("free", 0), ("allocate", 1, B8), ("allocate", 2, A8 + [9]), ("free", 1),
             ("free", 2), ("allocate", 3, C8), ("free", 3), ("allocate", 4, A8 + [9])]


@grade(PrefixCache, "correctness", points=3,
       hint="A block was used again after another one was freed: which of the two was used least recently?")
def test_prefix_cache_lru_story():
    """5 blocks of 4: A, free, B, A+[9] (hits A), free both, C evicts B's two blocks, A+[9] again hits 8."""
    trace = check_cache(5, 4, LRU_STORY, "LRU by last use, not by first insertion")
    assert trace[-1]["out"] == ("ok", 8) and trace[-1]["counters"][2] >= 2


@grade(PrefixCache, "correctness", points=2,
       hint="When a request ends, which of its blocks should be evicted first: its head or its tail?")
def test_prefix_cache_frees_tail_first():
    """A 3-block prompt freed, then a 2-block stranger: it must take the tail block, so the prompt still hits 8."""
    x = list(range(100, 112))
    ops = [("allocate", 0, x), ("free", 0), ("allocate", 1, [1, 2, 3, 4, 5]), ("free", 1), ("allocate", 2, x)]
    trace = check_cache(4, 4, ops, "free() walks the table from its tail")
    assert trace[-1]["out"] == ("ok", 8)


@grade(PrefixCache, "correctness", points=3,
       hint="Hit blocks waiting in the free queue are taken back, not consumed: do they count as free ones for this "
            "request? And what must the cache look like after it refuses?")
def test_prefix_cache_out_of_blocks():
    """4 blocks of 4: A (8) cached and free; A + 8 more fits exactly (2 hits revived + 2 new); A + 12 does not."""
    ops = [("allocate", 0, A8), ("free", 0), ("allocate", 1, A8 + B8), ("free", 1), ("allocate", 2, A8 + B8 + [7] * 4),
           ("allocate", 3, C8 + [1]), ("allocate", 4, A8), ("allocate", 5, [9] * 9), ("free", 4),
           ("allocate", 5, [9] * 9), ("allocate", 6, B8)]
    check_cache(4, 4, ops, "NoFreeBlocks changes nothing; referenced blocks are never evicted")


SCRIPT = st.lists(st.tuples(st.sampled_from(["allocate", "allocate", "free"]), st.integers(0, 5),
                            st.lists(st.integers(1, 3), min_size=1, max_size=14)), max_size=14)


@grade(PrefixCache, "correctness", points=3,
       hint="After every call: is each block either in some table (ref > 0) or in the free queue, never both?")
@settings(max_examples=30)
@given(script=SCRIPT, n=st.integers(2, 9), b=st.sampled_from([1, 2, 3, 4]))
@example(script=[(o[0], o[1], list(o[2]) if len(o) > 2 else [1]) for o in LRU_STORY], n=5, b=4)
def test_prefix_cache_random_scripts(script, n, b):
    ops = [("allocate", r, toks) if kind == "allocate" else ("free", r) for kind, r, toks in script]
    check_cache(n, b, ops)


@grade(PrefixCache, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_prefix_cache_rejects():
    check_cache(4, 4, [("allocate", 0, [1, 2]), ("allocate", 0, [3]), ("allocate", 1, []), ("free", 2)])
    assert_rejects_all(PrefixCache, [((0, 16), "num_blocks"), ((4, 0), "block_size"), ((4.0, 16), "num_blocks")])
