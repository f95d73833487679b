"""L33 · blocks, paged vs static utilisation, the block manager, the continuous-batching scheduler, lab 7.2."""

from __future__ import annotations

import contextlib
import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from l33_reference import RefPool, continuous_steps, replay_schedule

from grader.kit import (
    assert_exact,
    assert_number,
    assert_parts,
    assert_rejects,
    assert_rejects_all,
    grade,
    learner,
    where_learner_runs,
)

UNIT = "l33_paged_kv"
blocks_needed = learner(UNIT, "paged", "blocks_needed")
paged_utilization = learner(UNIT, "paged", "paged_utilization")
BlockManager = learner(UNIT, "paged", "BlockManager")
schedule_continuous = learner(UNIT, "paged", "schedule_continuous")
static_vs_continuous_steps = learner(UNIT, "paged", "static_vs_continuous_steps")

C2_LAB = [35, 12, 67, 89, 44, 25, 93, 18, 51, 76]


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


# ---- blocks_needed ---------------------------------------------------------------------------


@grade(blocks_needed, "correctness", points=2, hint="How many blocks of 16 does token 17 need: one or two?")
@settings(max_examples=40)
@given(n=st.integers(0, 10_000), b=st.integers(1, 64))
def test_blocks_needed(n, b):
    for args, want in (((37, 16), 3), ((32, 16), 2), ((33, 16), 3), ((0, 16), 0), ((1, 1), 1)):
        assert_exact(blocks_needed(*args), want, f"blocks_needed{args}", why="ceil(n / B)")
    assert_exact(blocks_needed(n, b), -(-n // b), f"blocks_needed({n}, {b})",
                 why="ceil(n / B): a partial block is a block")


@grade(blocks_needed, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_blocks_needed_rejects():
    assert_rejects_all(blocks_needed, [((-1, 16), "n_tokens"), ((37, 0), "block_size"), ((37.0, 16), "n_tokens")])


# ---- paged_utilization -----------------------------------------------------------------------


def utilization(lengths: list[int], b: int, cap: int) -> dict:
    blocks = sum(-(-n // b) for n in lengths)
    tokens = sum(lengths)
    return {"tokens": tokens, "blocks": blocks, "paged_slots": blocks * b, "static_slots": len(lengths) * cap,
            "internal_waste_slots": blocks * b - tokens}


def check_utilization(lengths: list[int], b: int, cap: int) -> None:
    call = f"paged_utilization({lengths}, {b}, {cap})"
    got = paged_utilization(lengths, b, cap)
    want = utilization(lengths, b, cap)
    assert isinstance(got, dict), f"{call} returned {got!r}, expected a dict"
    assert_named_parts({k: got.get(k) for k in want}, want, call)
    assert_number(got.get("paged_utilization"), want["tokens"] / want["paged_slots"], f"{call}['paged_utilization']")
    assert_number(got.get("static_utilization"), want["tokens"] / want["static_slots"], f"{call}['static_utilization']")


@grade(paged_utilization, "correctness", points=2,
       hint="Does each sequence get its own blocks, or do ten sequences share a tail?")
@settings(max_examples=20)
@given(lengths=st.lists(st.integers(1, 300), min_size=1, max_size=12), b=st.sampled_from([1, 8, 16, 32]))
def test_paged_utilization(lengths, b):
    got = paged_utilization(C2_LAB, 16, 128)
    assert_exact(got.get("blocks"), 37, "paged_utilization(C2 lab, 16, 128)['blocks']", why="ceil per sequence")
    assert_number(got.get("paged_utilization"), 510 / 592, "paged_utilization(C2 lab)['paged_utilization'] (86.15 %)")
    assert_number(got.get("static_utilization"), 510 / 1280,
                  "paged_utilization(C2 lab)['static_utilization'] (39.84 %)")
    check_utilization(lengths, b, max(lengths) + 7)


@grade(paged_utilization, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_paged_utilization_rejects():
    assert_rejects_all(paged_utilization, [(([35, 129], 16, 128), "lengths"), (([35], 0, 128), "block_size"),
                                           (([-1], 16, 128), "lengths"), (([35], 16, 0), "static_max_len")])


# ---- BlockManager ----------------------------------------------------------------------------


METHOD = {"append": "append_slot"}  # an op's name -> the BlockManager method it calls


def shown_call(op: tuple) -> str:
    """``.append_slot(1)``: an op as the call the learner's BlockManager gets (not a tuple's repr, ``(1,)``)."""
    return f".{METHOD.get(op[0], op[0])}({', '.join(repr(a) for a in op[1:])})"


def drive_block_manager(num_blocks: int, block_size: int, ops: list[tuple], n_seqs: int) -> list[dict]:
    """Run ``ops`` on the learner's BlockManager (where its code runs); after each op, its answer and state."""
    bm = BlockManager(num_blocks, block_size)
    trace = []
    for op in ops:
        method = METHOD.get(op[0], op[0])
        try:
            out = ("ok", getattr(bm, method)(*op[1:]))
        except ValueError as err:
            out = ("ValueError", str(err))
        except RuntimeError as err:
            if type(err).__name__ != "NoFreeBlocks":
                raise
            out = ("NoFreeBlocks", None)
        tables = {}
        for s in range(n_seqs):
            with contextlib.suppress(ValueError):  # not a live sequence
                tables[s] = (bm.block_table(s), bm.num_tokens(s))
        trace.append({"out": out, "tables": tables, "refs": [bm.ref_count(i) for i in range(num_blocks)],
                      "free": bm.num_free_blocks()})
    return trace


def as_plain(value: object) -> object:
    if isinstance(value, tuple | list):
        return [as_plain(v) for v in value]
    return value


def check_trace(num_blocks: int, block_size: int, ops: list[tuple], n_seqs: int) -> None:
    trace = where_learner_runs(drive_block_manager, num_blocks, block_size, ops, n_seqs)
    ref = RefPool(num_blocks, block_size)
    for k, (op, got) in enumerate(zip(ops, trace, strict=True)):
        before = f"BlockManager({num_blocks}, {block_size})" + (
            f" after {' '.join(shown_call(o) for o in ops[:k])}" if k else "")
        call = f"{before}: {shown_call(op)}"
        kind, value = ref.apply(op)
        gk, gv = got["out"]
        if kind == "ValueError":
            assert gk == "ValueError", f"{call} gave {got['out']!r}: expected ValueError naming `{value}`"
            assert value in gv, f"{call} raised ValueError({gv!r}): its message should name `{value}`"
        elif kind == "NoFreeBlocks":
            assert gk == "NoFreeBlocks", f"{call} gave {got['out']!r}: expected NoFreeBlocks (the pool is short)"
        else:
            assert gk == "ok", f"{call} raised {gk}({gv!r}); expected it to return {value!r}"
            if op[0] != "free":
                assert as_plain(gv) == as_plain(value), (
                    f"{call} returned {gv!r}, expected {value!r} (smallest free block first; slot = table[i // B]·B "
                    "+ i % B; copy-on-write only when the last block is shared)")
        want_tables = {s: (list(t), ref.tokens[s]) for s, t in ref.tables.items()}
        got_tables = {s: (list(t), n) for s, (t, n) in got["tables"].items()}
        assert got_tables == want_tables, f"{call}: tables and token counts {got_tables}, expected {want_tables}"
        assert got["refs"] == ref.ref, (
            f"{call}: ref_count per block {got['refs']}, expected {ref.ref} (the number of tables holding each block)")
        used = {b for t in ref.tables.values() for b in t}
        assert got["free"] == num_blocks - len(used), (
            f"{call}: num_free_blocks() = {got['free']}, expected {num_blocks - len(used)} (free + distinct used = "
            f"{num_blocks})")


WORKED = [("allocate", 0, 37), ("fork", 0, 1), ("append", 1), ("append", 0)] + [("append", 0)] * 11 + [
    ("free", 0), ("allocate", 2, 40), ("free", 1), ("free", 2)]


@grade(BlockManager, "correctness", points=3,
       hint="Token 37 of a forked sequence lands in block 2, which both tables hold: may it write there?")
def test_block_manager_worked():
    """B 16: allocate(0, 37) → [0, 1, 2]; fork → ref(2) = 2; child's append → (53, (2, 3)); parent's → (37, None)."""
    check_trace(8, 16, WORKED, 3)
    trace = where_learner_runs(drive_block_manager, 8, 16, WORKED, 3)
    assert_exact(trace[2]["out"][1][0], 53, "BlockManager(8, 16): allocate(0, 37); fork(0, 1); append_slot(1)[0]",
                 why="token 37 goes to the copy, block 3: 3·16 + 5")
    assert_exact(trace[14]["out"][1][0], 64, "the append of token 48 of sequence 0", why="a fresh block 4: 4·16 + 0")
    assert trace[16]["out"] == ("ok", [2, 4, 5]), (
        f"after free(0), allocate(2, 40) returned {trace[16]['out']!r}, expected [2, 4, 5]: blocks 0 and 1 are still "
        "in sequence 1's table, so they are not free")


OPS = st.one_of(
    st.tuples(st.just("allocate"), st.integers(0, 3), st.integers(0, 40)),
    st.tuples(st.just("append"), st.integers(0, 3)),
    st.tuples(st.just("fork"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("free"), st.integers(0, 3)),
)


@grade(BlockManager, "correctness", points=4,
       hint="After any sequence of operations, does every block's count equal the number of tables that hold it?")
@settings(max_examples=25)
@given(ops=st.lists(OPS, min_size=1, max_size=40), b=st.sampled_from([1, 2, 4, 16]), nb=st.integers(1, 10))
def test_block_manager_random_operations(ops, b, nb):
    """Random allocate/append/fork/free, and finally free all: tables, counts, free pool and errors as specified."""
    ops = ops + [("free", s) for s in range(4)]
    check_trace(nb, b, ops, 4)


@grade(BlockManager, "correctness", points=2,
       hint="If allocate needs 3 blocks and 2 are free, what should the pool look like after it refuses?")
def test_block_manager_short_pool_changes_nothing():
    ops = [("allocate", 0, 20), ("allocate", 1, 40), ("allocate", 2, 16), ("fork", 2, 3), ("append", 0), ("append", 1),
           ("append", 3), ("free", 2), ("append", 3), ("allocate", 4, 3), ("free", 3), ("free", 0), ("free", 1),
           ("allocate", 4, 3)]
    check_trace(5, 16, ops, 5)


def slot_errors(num_blocks: int, block_size: int) -> list[str]:
    bm = BlockManager(num_blocks, block_size)
    bm.allocate(0, 5)
    out = []
    for call in (lambda: bm.slot(0, 5), lambda: bm.slot(7, 0), lambda: bm.fork(0, 0), lambda: bm.free(3),
                 lambda: bm.allocate(0, 1)):
        try:
            call()
            out.append("returned")
        except ValueError as err:
            out.append(str(err))
    return out


@grade(BlockManager, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_block_manager_rejects():
    got = where_learner_runs(slot_errors, 4, 4)
    names = ["token_index", "seq_id", "child_id", "seq_id", "seq_id"]
    calls = ["slot(0, 5) with 5 tokens", "slot(7, 0) of an unknown sequence", "fork(0, 0)", "free(3) of an unknown one",
             "allocate(0, 1) twice"]
    for call, name, msg in zip(calls, names, got, strict=True):
        what = f"BlockManager(4, 4).allocate(0, 5); .{call}"
        assert msg != "returned", f"{what} returned: expected ValueError naming `{name}`"
        assert name in msg, f"{what} raised ValueError({msg!r}): its message should name `{name}`"
    assert_rejects(BlockManager, (0, 16), "num_blocks")


# ---- schedule_continuous ---------------------------------------------------------------------


def first_difference(got: list, want: list) -> str:
    for t, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"step {t}: got {g}, expected {w}"
    return f"{len(got)} steps, expected {len(want)} (the last: {want[-1] if want else None})"


def check_schedule(requests, budget, seqs, blocks, b) -> list[dict]:
    call = (f"schedule_continuous({requests}, token_budget={budget}, max_num_seqs={seqs}, num_blocks={blocks}, "
            f"block_size={b})")
    got = schedule_continuous(requests, budget, seqs, blocks, b)
    want = replay_schedule(requests, budget, seqs, blocks, b)
    assert isinstance(got, list | tuple), f"{call} returned {type(got).__name__}, expected a list of per-step dicts"
    plain = [{"scheduled": dict(s.get("scheduled", {})), "preempted": list(s.get("preempted", [])),
              "finished": list(s.get("finished", []))} if isinstance(s, dict) else s for s in got]
    for t, s in enumerate(plain):
        assert isinstance(s, dict), f"{call}[{t}] = {s!r}, expected a dict"
        total = sum(s["scheduled"].values())
        assert total <= budget, f"{call}[{t}] schedules {total} tokens, over the budget {budget} (the step's total)"
        assert len(s["scheduled"]) <= seqs, f"{call}[{t}] runs {len(s['scheduled'])} sequences, max_num_seqs {seqs}"
    order = [list(s["scheduled"].items()) for s in plain]
    want_order = [list(s["scheduled"].items()) for s in want]
    assert plain == want and order == want_order, f"{call}: {first_difference(plain, want)}"
    return plain


@grade(schedule_continuous, "correctness", points=3,
       hint="In one step, who is served first, request 0's decode or request 1's prompt? What budget is left for 1?")
def test_schedule_worked_mix():
    """[(0,100,4), (1,600,2), (2,30,3)], budget 256: {0:100}; {0:1, 1:255} ×2; {0:1, 1:90, 2:30}; {1:1, 2:1}; {2:1}."""
    got = check_schedule([(0, 100, 4), (1, 600, 2), (2, 30, 3)], 256, 8, 1000, 16)
    assert [s["finished"] for s in got] == [[], [], [], [0], [1], [2]]


@grade(schedule_continuous, "correctness", points=2,
       hint="4000 / 512 is not a whole number: how long is the last chunk, and when is the first token sampled?")
def test_schedule_chunked_prefill():
    """A 4000-token prompt with budget 512 and 3 new tokens: chunks 512 × 7, 416, then 1, 1."""
    got = check_schedule([(0, 4000, 3)], 512, 8, 1000, 16)
    assert [s["scheduled"][0] for s in got] == [512] * 7 + [416, 1, 1]


@grade(schedule_continuous, "correctness", points=3,
       hint="When request 0 needs a block and none is free, whose blocks go, and where does that request queue again?")
def test_schedule_preemption_worked():
    """Two 30-token prompts × 20 tokens on 5 blocks of 16, budget 64: request 1 is preempted at step 3; 37 steps."""
    got = check_schedule([(0, 30, 20), (0, 30, 20)], 64, 8, 5, 16)
    assert len(got) == 37 and [t for t, s in enumerate(got) if s["preempted"]] == [3]
    assert got[3]["preempted"] == [1] and 1 not in got[3]["scheduled"]


REQUESTS = st.lists(st.tuples(st.integers(0, 6), st.integers(1, 60), st.integers(1, 12)), min_size=1, max_size=7)


@grade(schedule_continuous, "correctness", points=4,
       hint="Is the budget shared by the whole step, and does a preempted request give back its blocks at once?")
@settings(max_examples=25)
@given(requests=REQUESTS, budget=st.integers(1, 80), seqs=st.integers(1, 5), b=st.sampled_from([1, 4, 8, 16]),
       extra=st.integers(0, 8))
def test_schedule_replay(requests, budget, seqs, b, extra):
    """Random fixtures, replayed step by step; each request emits exactly max_new tokens."""
    blocks = max(math.ceil((p + m - 1) / b) for _, p, m in requests) + extra
    got = check_schedule(requests, budget, seqs, blocks, b)
    done = [i for s in got for i in s["finished"]]
    assert sorted(done) == list(range(len(requests))), f"finished {done}: every request finishes exactly once"


@grade(schedule_continuous, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_schedule_rejects():
    assert_rejects_all(schedule_continuous, [
        (([(0, 30, 20)], 64, 8, 2, 16), "requests"),  # 49 tokens need 4 blocks of 16
        (([(0, 0, 5)], 64, 8, 8, 16), "requests"),
        (([(0, 30, 20)], 0, 8, 8, 16), "token_budget"),
        (([(0, 30, 20)], 64, 0, 8, 16), "max_num_seqs"),
    ])


# ---- static_vs_continuous_steps --------------------------------------------------------------


def lab_lengths(seed: int, lo: int, hi: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(16)]


@grade(static_vs_continuous_steps, "correctness", points=2,
       hint="When a request finishes at step t, at which step does its slot's next request produce its first token?")
@settings(max_examples=25)
@given(lengths=st.lists(st.integers(1, 50), min_size=1, max_size=20), k=st.integers(1, 6))
def test_static_vs_continuous(lengths, k):
    """seed 2026, randint(5, 40), batch 4 → 391 tokens, 140 vs 111 steps; seed 42, randint(10, 120): 959, 338, 279."""
    for seed, lo, hi, want in ((2026, 5, 40, (391, 140, 111)), (42, 10, 120, (959, 338, 279))):
        got = static_vs_continuous_steps(lab_lengths(seed, lo, hi), 4)
        assert_named_parts(got, dict(zip(("tokens", "static_steps", "continuous_steps"), want, strict=True)),
                           f"static_vs_continuous_steps(random.seed({seed}) randint({lo}, {hi}) × 16, 4)")
    want = {"tokens": sum(lengths), "static_steps": sum(max(lengths[i:i + k]) for i in range(0, len(lengths), k)),
            "continuous_steps": continuous_steps(lengths, k)}
    assert_named_parts(static_vs_continuous_steps(lengths, k), want, f"static_vs_continuous_steps({lengths}, {k})")


@grade(static_vs_continuous_steps, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
def test_static_vs_continuous_rejects():
    assert_rejects_all(static_vs_continuous_steps, [(([5, 0], 4), "lengths"), (([5], 0), "batch_size")])
