"""C2 · write_kv and paged_attention against dense attention; the engine against naive greedy generation and L33."""

from __future__ import annotations

import functools
import random

import pytest
import torch
from c2_model import (
    CONFIGS,
    MAX_NEW,
    TinyDecoder,
    dense_causal,
    fixture_prompts,
    load_l33_reference,
    naive_generate,
)

from grader.kit import assert_close, assert_rejects, grade, learner, where_learner_runs

UNIT = "c2_paged_engine"
write_kv = learner(UNIT, "engine", "write_kv", writes={"k_cache": 0, "v_cache": 1})
paged_attention = learner(UNIT, "engine", "paged_attention")
PagedEngine = learner(UNIT, "engine", "PagedEngine")

replay_schedule = load_l33_reference().replay_schedule


class one_thread:
    """torch on one thread while the tiny model runs: on a shared 2-core box, threads only contend."""

    def __enter__(self) -> None:
        self.before = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        torch.set_num_threads(self.before)


# ---- write_kv --------------------------------------------------------------------------------


def caches(num_blocks: int, b: int, h: int = 2, d: int = 3, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(num_blocks, b, h, d, generator=g, dtype=torch.float64),
            torch.randn(num_blocks, b, h, d, generator=g, dtype=torch.float64))


@grade(write_kv, "correctness", points=2, hint="Slot 13 with blocks of 4: which block, which offset?")
def test_write_kv_places_rows():
    """Rows land at block slot // B, offset slot % B, in place; every other slot keeps its value."""
    for num_blocks, b, slots in ((10, 4, [28, 29, 8, 13, 0, 39]), (3, 1, [2, 0]), (5, 16, [79, 16, 15, 64])):
        kc, vc = caches(num_blocks, b)
        g = torch.Generator().manual_seed(len(slots))
        k = torch.randn(len(slots), 2, 3, generator=g, dtype=torch.float64)
        v = torch.randn(len(slots), 2, 3, generator=g, dtype=torch.float64)
        k0, v0 = kc.clone(), vc.clone()  # the expected caches, built before the call from the grader's own tensors
        for t, s in enumerate(slots):
            k0[s // b, s % b], v0[s // b, s % b] = k[t], v[t]
        call = f"write_kv(caches [{num_blocks}, {b}, 2, 3], k, v, slots={slots})"
        out = write_kv(kc, vc, k, v, torch.tensor(slots))
        assert out is None, f"{call} returned {type(out).__name__}: it writes the caches in place and returns None"
        assert_close(kc, k0, dtype=torch.float64, what=f"{call}: K cache, row t at block slot // B, offset slot % B")
        assert_close(vc, v0, dtype=torch.float64, what=f"{call}: the V cache")


# ---- paged_attention -------------------------------------------------------------------------


def scattered(table: list[int], context: int, b: int, h: int, d: int, seed: int, poison: bool):
    """Dense K/V of one sequence, written into caches through ``table``; other slots NaN when ``poison``."""
    g = torch.Generator().manual_seed(seed)
    nb = max(table) + 2
    kc, vc = caches(nb, b, h, d, seed + 1)
    if poison:
        kc.fill_(float("nan"))
        vc.fill_(float("nan"))
    k = torch.randn(context, h, d, generator=g, dtype=torch.float64)
    v = torch.randn(context, h, d, generator=g, dtype=torch.float64)
    for p in range(context):
        kc[table[p // b], p % b], vc[table[p // b], p % b] = k[p], v[p]
    q = torch.randn(context, h, d, generator=g, dtype=torch.float64) * 2
    return q, k, v, kc, vc


def check_attention(table, context, t, b, h=4, d=8, seed=0, poison=True) -> None:
    q, k, v, kc, vc = scattered(table, context, b, h, d, seed, poison)
    q_start = context - t
    call = f"paged_attention(q[{t}], block_table={table}, context_len={context}, q_start={q_start}) with B={b}"
    got = paged_attention(q[q_start:], kc, vc, table, context, q_start)
    want = dense_causal(q[q_start:], k, v, q_start)
    what = f"{call}, vs dense causal attention" + (" (slots outside the context hold NaN)" if poison else "")
    assert_close(got, want, dtype=torch.float64, what=what)


@grade(paged_attention, "correctness", points=3,
       hint="Which key may the query at position 10 see, and which slots of the last block hold no token yet?")
def test_paged_attention_worked():
    """Blocks [7, 2, 9, 0] of 4, 13 tokens: all 13 queries, then the last 4 (a chunk), equal dense attention."""
    check_attention([7, 2, 9, 0], 13, 13, 4, poison=False)
    check_attention([7, 2, 9, 0], 13, 4, 4, poison=False)
    check_attention([7, 2, 9, 0], 13, 1, 4, poison=False)


@grade(paged_attention, "correctness", points=3,
       hint="Do you read whole blocks? The slots after context_len belong to no token (here they hold NaN).")
def test_paged_attention_reads_only_the_context():
    rng = random.Random(5)
    for case in range(12):
        b = rng.choice([1, 2, 4, 16])
        context = rng.randint(1, 40)
        table = rng.sample(range(60), -(-context // b))
        check_attention(table, context, rng.randint(1, context), b, h=rng.choice([1, 3]), d=rng.choice([2, 8]),
                        seed=case)


@grade(paged_attention, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_paged_attention_rejects():
    q, _, _, kc, vc = scattered([0, 1], 6, 4, 2, 3, 0, False)
    assert_rejects(paged_attention, (q[2:], kc, vc, [0, 1], 5, 2), "context_len")


# ---- the engine ------------------------------------------------------------------------------


class CountingModel(TinyDecoder):
    """The grader's decoder, counting each forward call's tokens (trusted: it lives in the tests)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def forward(self, tokens, positions, attend):
        self.calls.append(int(tokens.shape[0]))
        return super().forward(tokens, positions, attend)

    __call__ = forward


def run_engine(config: tuple[int, int, int, int]) -> dict:
    """Where the learner's code runs: the engine on the fixture; plain data back."""
    num_blocks, b, seqs, budget = config
    with one_thread():
        model = CountingModel()
        engine = PagedEngine(model, num_blocks, b, seqs, budget)
        for i, (p, n) in enumerate(zip(fixture_prompts(), MAX_NEW, strict=True)):
            engine.add_request(i, p, n)
        out = engine.run()
        return {"tokens": {int(k): [int(t) for t in v] for k, v in out.items()},
                "log": [{"scheduled": dict(s["scheduled"]), "preempted": list(s["preempted"]),
                         "finished": list(s["finished"])} for s in engine.log],
                "calls": list(model.calls), "used": engine.used_blocks(), "peak": engine.peak_blocks,
                "steps": engine.steps, "forward_tokens": engine.forward_tokens}


@functools.cache
def naive() -> list[list[int]]:
    with one_thread():
        model = TinyDecoder()
        out = []
        for p, n in zip(fixture_prompts(), MAX_NEW, strict=True):
            tokens, gap = naive_generate(model, p, n)
            assert gap > 1e-6, f"grader fixture: top-2 logit gap {gap} too small for an exact argmax comparison"
            out.append(tokens)
        return out


@pytest.fixture(scope="module")
def engine_run():
    """The engine's run of each configuration, once per grading session (each target is a new session)."""
    runs: dict[tuple[int, int, int, int], dict] = {}

    def get(config: tuple[int, int, int, int]) -> dict:
        if config not in runs:
            runs[config] = where_learner_runs(run_engine, config)
        return runs[config]

    return get


def label(config) -> str:
    nb, b, s, budget = config
    return f"PagedEngine(num_blocks={nb}, block_size={b}, max_num_seqs={s}, token_budget={budget})"


@grade(PagedEngine, "correctness", points=4,
       hint="Run one request alone first: do its tokens equal naive_generate's? Then two requests sharing a step.")
def test_engine_tokens_equal_naive(engine_run):
    """The ten fixtures in four configurations (one with 3 preemptions): every greedy token equals naive_generate."""
    want = naive()
    for config in CONFIGS:
        got = engine_run(config)["tokens"]
        for i, tokens in enumerate(want):
            assert got.get(i) == tokens, (
                f"{label(config)}, ten requests added, run()[{i}] = {got.get(i)}, expected {tokens} (greedy, one "
                "request at a time): check the slots you write, the context each query sees, and the row you sample")


@grade(PagedEngine, "correctness", points=4,
       hint="Is every step's schedule what L33's schedule_continuous gives for the same requests?")
def test_engine_schedule_is_l33s(engine_run):
    """Per step: the log equals L33's replay; each forward runs that step's tokens, within budget and sequences."""
    requests = [(0, len(p), n) for p, n in zip(fixture_prompts(), MAX_NEW, strict=True)]
    for config in CONFIGS:
        nb, b, seqs, budget = config
        run = engine_run(config)
        want = replay_schedule(requests, budget, seqs, nb, b)
        for t, (g, w) in enumerate(zip(run["log"], want, strict=False)):
            assert g == w, f"{label(config)}: log[{t}] = {g}, expected {w} (L33's rules, replayed)"
        assert len(run["log"]) == len(want), f"{label(config)}: {len(run['log'])} steps logged, expected {len(want)}"
        over = [(t, n) for t, n in enumerate(run["calls"]) if n > budget]
        assert not over, f"{label(config)}: forward calls (step, tokens) {over[:3]} run over token_budget {budget}"
        assert 0 < run["peak"] <= nb, f"{label(config)}: peak_blocks = {run['peak']}, expected within 1 … {nb}"


@grade(PagedEngine, "correctness", points=2, hint="When a request finishes or is preempted, where do its blocks go?")
def test_engine_frees_every_block(engine_run):
    for config in CONFIGS:
        run = engine_run(config)
        assert run["used"] == 0, f"{label(config)}: {run['used']} blocks still in use after run(), expected 0"


@grade(PagedEngine, "efficiency", points=3,
       hint="How many model.forward calls does one step need, and how many tokens does a decode feed?")
def test_engine_computes_each_kv_once(engine_run):
    """ONE forward per step; without preemption, Σ tokens through the model = Σ (prompt + max_new − 1) = 219."""
    want = sum(len(p) + n - 1 for p, n in zip(fixture_prompts(), MAX_NEW, strict=True))
    for config in CONFIGS:
        run = engine_run(config)
        steps = len(run["log"])  # the engine's own steps: its schedule is graded by the correctness tests
        assert len(run["calls"]) == steps, (
            f"{label(config)}: {len(run['calls'])} model.forward calls for {steps} logged steps: batch every "
            "scheduled sequence of a step into one flat forward")
        if not any(s["preempted"] for s in run["log"]):
            assert sum(run["calls"]) == want, (
                f"{label(config)}: {sum(run['calls'])} tokens through the model, expected {want} = Σ (prompt + "
                "max_new − 1): a token's KV is computed once, a decode feeds only the newest token")


def engine_errors() -> list[str]:
    with one_thread():
        out = []
        engine = PagedEngine(TinyDecoder(), 4, 4, 2, 8)
        engine.add_request(0, [1, 2, 3], 2)
        for args in ((0, [4], 1), (1, [], 3), (2, [1] * 14, 4)):
            try:
                engine.add_request(*args)
                out.append("returned")
            except ValueError as err:
                out.append(str(err))
        return out


@grade(PagedEngine, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_engine_rejects():
    got = where_learner_runs(engine_errors)
    for call, name, msg in zip(("add_request(0, [4], 1) again", "add_request(1, [], 3)",
                                "add_request(2, [1] × 14, 4) on 4 blocks of 4"), ("req_id", "prompt", "prompt"), got,
                               strict=True):
        what = f"PagedEngine(TinyDecoder(), 4, 4, 2, 8).add_request(0, [1, 2, 3], 2); .{call}"
        assert msg != "returned", f"{what} returned: expected ValueError naming `{name}`"
        assert name in msg, f"{what} raised ValueError({msg!r}): its message should name `{name}`"
