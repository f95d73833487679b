"""C5 · the decode floor, FlashDecoding's split count, and the clocked generation loop (worked cases + a model)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects, assert_rejects_all, grade, learner

UNIT = "c5_token_generation"
decode_floor_ledger = learner(UNIT, "tokengen", "decode_floor_ledger")
flashdecoding_splits = learner(UNIT, "tokengen", "flashdecoding_splits")
TokenGenSim = learner(UNIT, "tokengen", "TokenGenSim")
simulate_generation = learner(UNIT, "tokengen", "simulate_generation")

W70B = 140_000_000_000  # 70B parameters in bf16
KV70B_TOKEN = 2 * 80 * 8 * 128 * 2  # 327,680 B: K and V, 80 layers, 8 kv heads, d 128, bf16
A100_BW, A100_BF16 = 2.0e12, 312e12  # the course's round 2.0 TB/s (the datasheet says 2.039)


# ---- decode_floor_ledger -----------------------------------------------------------------------


def check_floor(args: tuple, want_bytes: int, want_flops: int, bw: float, peak: float, batch: int) -> None:
    got = decode_floor_ledger(*args)
    call = f"decode_floor_ledger{args}"
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict"
    assert_exact(got.get("bytes"), want_bytes, f"{call}['bytes']", why="weights + the batch's KV, read once", unit="B")
    assert_exact(got.get("flops"), want_flops, f"{call}['flops']", why="batch · flops_per_token", unit="FLOP")
    t = want_bytes / bw
    for key, want in (("t_min_s", t), ("arith_intensity", want_flops / want_bytes), ("mfu", want_flops / t / peak),
                      ("tokens_per_s_max", batch / t)):
        assert_number(got.get(key), want, f"{call}['{key}']")


@grade(decode_floor_ledger, "correctness", points=2,
       hint="How many bytes must one decode step read at least, and how long does HBM take to deliver them?")
def test_decode_floor_worked():
    """70B bf16 on an A100 (2.0 TB/s): 70 ms, AI 1.0, MFU 0.64 %; with 4K tokens of KV; batch 64 × 4K."""
    check_floor((W70B, 0, A100_BW, A100_BF16, W70B), W70B, W70B, A100_BW, A100_BF16, 1)
    got = decode_floor_ledger(W70B, 0, A100_BW, A100_BF16, W70B)
    assert_number(got["t_min_s"], 0.07, "decode_floor_ledger(70B, no KV)['t_min_s']")
    assert_number(got["mfu"], 0.00641025641025641, "decode_floor_ledger(70B, no KV)['mfu'] (a fraction, not a %)")
    kv = 4096 * KV70B_TOKEN
    check_floor((W70B, kv, A100_BW, A100_BF16, W70B), 141_342_177_280, W70B, A100_BW, A100_BF16, 1)
    kv64 = 64 * 4096 * KV70B_TOKEN
    check_floor((W70B, kv64, A100_BW, A100_BF16, W70B, 64), 225_899_345_920, 64 * W70B, A100_BW, A100_BF16, 64)
    got = decode_floor_ledger(W70B, kv64, A100_BW, A100_BF16, W70B, 64)
    assert_number(got["tokens_per_s_max"], 566.624039917893, "batch 64 × 4K: tokens_per_s_max",
                  rel=1e-9)


@grade(decode_floor_ledger, "correctness", points=1,
       hint="kv_bytes is already the whole batch's KV: does batch multiply it once more?")
@settings(max_examples=20)
@given(w=st.integers(0, 10**12), kv=st.integers(0, 10**12), fpt=st.integers(1, 10**12), batch=st.integers(1, 512),
       bw=st.floats(1e9, 1e13), peak=st.floats(1e12, 1e16))
def test_decode_floor_random(w, kv, fpt, batch, bw, peak):
    if w + kv == 0:
        kv = 1
    check_floor((w, kv, bw, peak, fpt, batch), w + kv, batch * fpt, bw, peak, batch)


@grade(decode_floor_ledger, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_decode_floor_rejects():
    assert_rejects_all(decode_floor_ledger, [
        ((140e9, 0, A100_BW, A100_BF16, W70B), "weight_bytes"), ((W70B, -1, A100_BW, A100_BF16, W70B), "kv_bytes"),
        ((0, 0, A100_BW, A100_BF16, W70B), None), ((W70B, 0, 0.0, A100_BF16, W70B), "hbm_bytes_per_s"),
        ((W70B, 0, A100_BW, math.inf, W70B), "peak_flops"), ((W70B, 0, A100_BW, A100_BF16, 0), "flops_per_token"),
        ((W70B, 0, A100_BW, A100_BF16, W70B, True), "batch"), ((W70B, 0, A100_BW, A100_BF16, W70B, 0), "batch"),
    ])


# ---- flashdecoding_splits ----------------------------------------------------------------------


def splits_model(h: int, b: int, sms: int, n: int, bs: int) -> dict[str, int]:
    n_blocks = -(-n // bs)
    splits = 1
    while splits < n_blocks and h * b * splits < sms:  # the fewest splits that give every SM a CTA
        splits += 1
    return {"n_blocks": n_blocks, "splits": splits, "chunk_tokens": -(-n_blocks // splits) * bs,
            "ctas": h * b * splits, "waves": -(-h * b * splits // sms)}


def check_splits(args: tuple, want: dict[str, int], why: str) -> None:
    got = flashdecoding_splits(*args)
    assert isinstance(got, dict), f"flashdecoding_splits{args} returned {type(got).__name__}, expected a dict"
    for key in ("splits", "chunk_tokens", "ctas", "waves"):
        assert_exact(got.get(key), want[key], f"flashdecoding_splits{args}['{key}']", why=why, unit="")


@grade(flashdecoding_splits, "correctness", points=2,
       hint="8 kv heads × batch 1 give 8 CTAs for 132 SMs: how many splits until every SM has one?")
def test_splits_worked():
    """H100 (132 SMs), 8 kv heads, 32K context: 17 splits of 1928 tokens; blocks of 16, A100, batch 16, 100 tokens."""
    for args, want, why in (
        ((8, 1, 132, 32768), dict(splits=17, chunk_tokens=1928, ctas=136, waves=2), "ceil(132 / 8) = 17 splits"),
        ((8, 1, 132, 32768, 16), dict(splits=17, chunk_tokens=1936, ctas=136, waves=2),
         "ceil(2048 blocks / 17) = 121 blocks of 16"),
        ((8, 1, 108, 32768), dict(splits=14, chunk_tokens=2341, ctas=112, waves=2), "A100: ceil(108 / 8) = 14"),
        ((8, 16, 132, 32768), dict(splits=2, chunk_tokens=16384, ctas=256, waves=2), "128 CTAs need 2 splits"),
        ((8, 1, 132, 100, 16), dict(splits=7, chunk_tokens=16, ctas=56, waves=1), "a split holds >= 1 block: 7"),
        ((8, 32, 132, 4096), dict(splits=1, chunk_tokens=4096, ctas=256, waves=2), "256 CTAs already: 1 split"),
    ):
        check_splits(args, want, why)


@grade(flashdecoding_splits, "correctness", points=1,
       hint="Is your split count the smallest that fills every SM, and never more than the blocks?")
@settings(max_examples=25)
@given(h=st.integers(1, 16), b=st.integers(1, 64), sms=st.integers(1, 200), n=st.integers(1, 40_000),
       bs=st.sampled_from([1, 16, 32, 256]))
def test_splits_random(h, b, sms, n, bs):
    check_splits((h, b, sms, n, bs), splits_model(h, b, sms, n, bs), "the fewest splits filling the SMs, <= blocks")


@grade(flashdecoding_splits, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_splits_rejects():
    assert_rejects_all(flashdecoding_splits, [
        ((0, 1, 132, 100), "n_kv_heads"), ((8, 1.0, 132, 100), "batch"), ((8, 1, 0, 100), "n_sms"),
        ((8, 1, 132, 0), "seq_len"), ((8, 1, 132, 100, 0), "block_size"), ((8, 1, 132, 100, False), "block_size"),
    ])


# ---- the generation loop: a reference model ---------------------------------------------------------


def reference_run(requests, budget, max_seqs, num_blocks, bs, chunked=True, gamma=0, accepted=(0,), t_fixed=0.0,
                  t_token=0.0, t_draft=0.0) -> dict:
    """The grader's model: same rules, written as an event log (per request: a list of emission times)."""
    n_req = len(requests)
    need = [-(-(p + n - 1 + gamma) // bs) for _, p, n in requests]
    pending = sorted(range(n_req), key=lambda i: (requests[i][0], i))
    queue, active, times = [], [], {i: [] for i in range(n_req)}
    done_prompt, n_rounds, free, clock, log = [0] * n_req, [0] * n_req, num_blocks, 0.0, []
    while any(len(times[i]) < requests[i][2] for i in range(n_req)):
        if not active and not queue:
            clock = max(clock, requests[pending[0]][0])
        queue += [i for i in pending if requests[i][0] <= clock]
        pending = [i for i in pending if requests[i][0] > clock]
        plan, budget_left = {}, budget
        for i in active:
            rest = requests[i][1] - done_prompt[i]
            if rest > 0:
                take = min(rest, budget_left) if chunked else (rest if rest <= budget_left else 0)
            else:
                take = (1 + gamma) if budget_left >= 1 + gamma else 0
            if take:
                plan[i] = take
                budget_left -= take
        while queue and len(active) < max_seqs and need[queue[0]] <= free:
            i = queue[0]
            if (chunked and budget_left == 0) or (not chunked and budget_left < requests[i][1]):
                break
            queue.pop(0)
            active.append(i)
            free -= need[i]
            plan[i] = min(requests[i][1], budget_left)
            budget_left -= plan[i]
        spec = gamma > 0 and any(done_prompt[i] >= requests[i][1] for i in plan)
        end = clock + t_fixed + t_token * sum(plan.values()) + (gamma * t_draft if spec else 0.0)
        out, fin = {}, []
        for i, take in plan.items():
            p, n = requests[i][1], requests[i][2]
            if done_prompt[i] < p:
                done_prompt[i] += take
                k = int(done_prompt[i] == p)
            else:
                a = accepted[n_rounds[i] % len(accepted)] if gamma else 0
                n_rounds[i] += 1
                k = min(a + 1, n - len(times[i]))
            if k:
                out[i] = k
                times[i] += [end] * k
                if len(times[i]) == n:
                    fin.append(i)
        for i in fin:
            active.remove(i)
            free += need[i]
        log.append({"t_start": clock, "t_end": end, "scheduled": plan, "emitted": out, "finished": fin})
        clock = end
    return {"steps": log, "times": times}


def label(requests, budget, max_seqs, num_blocks, bs, **kw) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in kw.items())
    return f"simulate_generation({requests}, {budget}, {max_seqs}, {num_blocks}, {bs}{extra})"


def check_run(got: object, requests, ref: dict, what: str) -> None:
    """Steps (scheduled and emitted in order, finished, times) and the per-request metrics against the model."""
    assert isinstance(got, dict) and isinstance(got.get("steps"), list), f"{what}: expected a dict with 'steps'"
    steps = got["steps"]
    for k, (s, w) in enumerate(zip(steps, ref["steps"], strict=False)):
        for key in ("scheduled", "emitted"):
            assert isinstance(s.get(key), dict) and list(s[key].items()) == list(w[key].items()), (
                f"{what}: step {k} {key} = {s.get(key)}, expected {w[key]} (in scheduling order)")
        assert sorted(s.get("finished", [])) == sorted(w["finished"]), (
            f"{what}: step {k} finished {s.get('finished')}, expected {w['finished']}")
        for key in ("t_start", "t_end"):
            assert_number(s.get(key), w[key], f"{what}: step {k} {key}", abs_tol=1e-12)
    assert len(steps) == len(ref["steps"]), f"{what}: {len(steps)} steps, expected {len(ref['steps'])}"
    per = got.get("requests")
    assert isinstance(per, list) and len(per) == len(requests), f"{what}: 'requests' should hold one dict per request"
    for i, ((arrival, _, n), r) in enumerate(zip(requests, per, strict=True)):
        t = ref["times"][i]
        assert_exact(r.get("tokens"), n, f"{what}: requests[{i}]['tokens']", why="max_new_tokens", unit="tokens")
        itl = max((b - a for a, b in zip(t, t[1:], strict=False)), default=0.0)
        for key, want in (("ttft_s", t[0] - arrival), ("tpot_s", (t[-1] - t[0]) / (n - 1) if n > 1 else 0.0),
                          ("finish_s", t[-1]), ("max_itl_s", itl)):
            assert_number(r.get(key), want, f"{what}: requests[{i}]['{key}']", abs_tol=1e-12)
    makespan = max(t[-1] for t in ref["times"].values())
    multi = [(t[-1] - t[0]) / (len(t) - 1) for t in ref["times"].values() if len(t) > 1]
    for key, want in (("makespan_s", makespan), ("mean_ttft_s", sum(
            ref["times"][i][0] - requests[i][0] for i in range(len(requests))) / len(requests)),
            ("mean_tpot_s", sum(multi) / len(multi) if multi else 0.0),
            ("max_itl_s", max(r["max_itl_s"] for r in per))):
        assert_number(got.get(key), want, f"{what}['{key}']", abs_tol=1e-12)
    if makespan > 0:
        total = sum(n for _, _, n in requests)
        assert_number(got.get("throughput_tok_s"), total / makespan, f"{what}['throughput_tok_s']", rel=1e-9)


HAND = [(0, 100, 4), (0, 600, 2), (0, 30, 3)]
STALL = [(0, 16, 40), (0.05, 2048, 2)]
CLOCK = dict(t_fixed_s=0.010, t_token_s=0.0001)


def run_case(requests, budget, max_seqs, num_blocks, bs, **kw) -> dict:
    got = simulate_generation(requests, budget, max_seqs, num_blocks, bs, **kw)
    ref = reference_run(requests, budget, max_seqs, num_blocks, bs, kw.get("chunked_prefill", True),
                        kw.get("spec_gamma", 0), kw.get("spec_accepted", (0,)), kw.get("t_fixed_s", 0.0),
                        kw.get("t_token_s", 0.0), kw.get("t_draft_s", 0.0))
    check_run(got, requests, ref, label(requests, budget, max_seqs, num_blocks, bs, **kw))
    return got


@grade(simulate_generation, "correctness", points=3,
       hint="Step 0 admits request 0 (100 tokens) and then request 1: how much of the 256-token budget is left for it?")
def test_hand_schedule():
    """HAND, budget 256, 8 sequences, 64 blocks of 16: the five steps, their times, TTFT, TPOT, throughput."""
    got = simulate_generation(HAND, 256, 8, 64, 16, **CLOCK)
    what = label(HAND, 256, 8, 64, 16, **CLOCK)
    want = [({0: 100, 1: 156}, {0: 1}, 0.0356), ({0: 1, 1: 255}, {0: 1}, 0.0712),
            ({0: 1, 1: 189, 2: 30}, {0: 1, 1: 1, 2: 1}, 0.1032), ({0: 1, 1: 1, 2: 1}, {0: 1, 1: 1, 2: 1}, 0.1135),
            ({2: 1}, {2: 1}, 0.1236)]
    steps = got.get("steps") if isinstance(got, dict) else None
    assert isinstance(steps, list) and len(steps) == 5, f"{what}: expected 5 steps, got {steps!r:.300}"
    for k, (s, (sched, emitted, end)) in enumerate(zip(steps, want, strict=False)):
        assert list(s.get("scheduled", {}).items()) == list(sched.items()), (
            f"{what}: step {k} scheduled {s.get('scheduled')}, expected {sched} (running first, then FCFS admission)")
        assert s.get("emitted") == emitted, f"{what}: step {k} emitted {s.get('emitted')}, expected {emitted}"
        assert_number(s.get("t_end"), end, f"{what}: step {k} t_end (10 ms + 0.1 ms per scheduled token)")
    for i, (ttft, tpot) in enumerate(((0.0356, (0.1135 - 0.0356) / 3), (0.1032, 0.1135 - 0.1032),
                                      (0.1032, (0.1236 - 0.1032) / 2))):
        assert_number(got["requests"][i].get("ttft_s"), ttft, f"{what}: requests[{i}]['ttft_s']")
        assert_number(got["requests"][i].get("tpot_s"), tpot, f"{what}: requests[{i}]['tpot_s']")
    assert_number(got.get("makespan_s"), 0.1236, f"{what}['makespan_s']")
    assert_number(got.get("throughput_tok_s"), 9 / 0.1236, f"{what}['throughput_tok_s'] (9 tokens)")
    assert_number(got.get("max_itl_s"), 0.0356, f"{what}['max_itl_s']")
    run_case(HAND, 256, 8, 64, 16, **CLOCK)


@grade(TokenGenSim, "correctness", points=1, hint="Does run() of the class give what simulate_generation gives?")
def test_sim_class():
    """TokenGenSim(HAND, ...).run() is the same schedule."""
    sim = TokenGenSim(HAND, 256, 8, 64, 16, **CLOCK)
    ref = reference_run(HAND, 256, 8, 64, 16, t_fixed=0.010, t_token=0.0001)
    check_run(sim.run(), HAND, ref, "TokenGenSim(HAND, 256, 8, 64, 16, t_fixed_s=0.01, t_token_s=0.0001).run()")


@grade(simulate_generation, "correctness", points=3,
       hint="With max_num_seqs 1, when does request 2 arrive, and when is its first token out?")
def test_knobs_on_hand():
    """Budget 1024, max_num_seqs 1 (TTFT from arrival), 40 blocks (reservations 7 / 38 / 2 block the line)."""
    base = run_case(HAND, 256, 8, 64, 16, **CLOCK)
    big = run_case(HAND, 1024, 8, 64, 16, **CLOCK)
    one = run_case(HAND, 256, 1, 64, 16, **CLOCK)
    tight = run_case(HAND, 256, 8, 40, 16, **CLOCK)
    for got, ttft, tput, what in ((big, [0.083] * 3, 9 / 0.1136, "budget 1024"),
                                  (one, [0.02, 0.1403, 0.1634], 9 / 0.1836, "max_num_seqs 1 (queueing counted)"),
                                  (tight, [0.02, 0.1433, 0.1433], 9 / 0.1636, "40 blocks")):
        for i, want in enumerate(ttft):
            assert_number(got["requests"][i]["ttft_s"], want, f"HAND, {what}: requests[{i}]['ttft_s']")
        assert_number(got["throughput_tok_s"], tput, f"HAND, {what}: throughput_tok_s")
    assert big["requests"][1]["ttft_s"] < base["requests"][1]["ttft_s"], "a bigger budget must lower the long TTFT"
    for got in (one, tight):
        assert got["mean_ttft_s"] > base["mean_ttft_s"] and got["throughput_tok_s"] < base["throughput_tok_s"]


@grade(simulate_generation, "correctness", points=2,
       hint="Unchunked, the 2048-token prompt runs in one step: what happens to request 0's next token?")
def test_chunking_moves_the_stall():
    """STALL: chunking caps the worst gap (61.2 ms vs 214.9 ms) but delays the long prompt's first token."""
    chunked = run_case(STALL, 512, 8, 1000, 16, **CLOCK)
    whole = run_case(STALL, 4096, 8, 1000, 16, chunked_prefill=False, **CLOCK)
    blocked = run_case(STALL, 2048, 8, 1000, 16, chunked_prefill=False, **CLOCK)
    for got, ttft, itl, what in ((chunked, 0.2573, 0.0612, "chunked, budget 512"),
                                 (whole, 0.2169, 0.2149, "unchunked, budget 4096"),
                                 (blocked, 0.5703, 0.0101, "unchunked, budget 2048 (never fits beside a decode)")):
        assert_number(got["requests"][1]["ttft_s"], ttft, f"STALL, {what}: requests[1]['ttft_s']")
        assert_number(got["max_itl_s"], itl, f"STALL, {what}: max_itl_s")
    assert_number(chunked["requests"][0]["tpot_s"], whole["requests"][0]["tpot_s"], "request 0's TPOT, both ways")


@grade(simulate_generation, "correctness", points=2,
       hint="A round emits the accepted drafts plus one token from the target: how many when nothing is accepted?")
def test_speculation():
    """γ 4, t_draft 2 ms: all accepted 3.795 ms TPOT; none accepted 18.5 ms, slower than plain 10.1 ms decode."""
    one = [(0, 16, 40)]
    spec = dict(spec_gamma=4, t_draft_s=0.002, **CLOCK)
    half = run_case(one, 512, 8, 1000, 16, spec_accepted=(2,), **spec)
    assert_number(half["requests"][0]["tpot_s"], 13 * 0.0185 / 39, "spec_accepted (2,): tpot_s (13 rounds of 3)")
    all_in = run_case(one, 512, 8, 1000, 16, spec_accepted=(4,), **spec)
    none = run_case(one, 512, 8, 1000, 16, spec_accepted=(0,), **spec)
    plain = run_case(one, 512, 8, 1000, 16, **CLOCK)
    assert_number(none["requests"][0]["tpot_s"], 0.0185, "spec_accepted (0,): tpot_s (one token per 18.5 ms round)")
    assert_number(all_in["requests"][0]["tpot_s"], 0.148 / 39, "spec_accepted (4,): tpot_s (8 rounds of 18.5 ms)")
    assert all_in["requests"][0]["tpot_s"] < plain["requests"][0]["tpot_s"] < none["requests"][0]["tpot_s"]
    # a decode round that does not fit the budget left waits; reservations hold the γ draft slots
    run_case([(0, 4, 6)] * 3, 12, 8, 100, 16, spec_accepted=(1,), **spec)
    run_case([(0, 16, 33)] * 2, 512, 8, 7, 16, spec_accepted=(2, 4), **spec)
    mixed = run_case(STALL, 512, 8, 1000, 16, spec_accepted=(4, 2, 0, 3), **spec)
    assert len(mixed["steps"]) == 13, f"STALL with γ 4, accepted (4, 2, 0, 3): {len(mixed['steps'])} steps, expected 13"


@st.composite
def workloads(draw: st.DrawFn):
    n = draw(st.integers(1, 5))
    bs = draw(st.sampled_from([1, 4, 16]))
    gamma = draw(st.sampled_from([0, 0, 2, 3]))
    reqs = [(draw(st.sampled_from([0, 0.0, 0.005, 0.02, 0.1])), draw(st.integers(1, 60)), draw(st.integers(1, 12)))
            for _ in range(n)]
    chunked = draw(st.booleans())
    low = max(1 + gamma, max(p for _, p, _ in reqs) if not chunked else 1)
    budget = draw(st.integers(low, low + 64))
    most = max(-(-(p + m - 1 + gamma) // bs) for _, p, m in reqs)
    blocks = draw(st.integers(most, most * 3))
    accepted = tuple(draw(st.lists(st.integers(0, gamma), min_size=1, max_size=3)))
    return reqs, budget, draw(st.integers(1, 4)), blocks, bs, dict(
        chunked_prefill=chunked, spec_gamma=gamma, spec_accepted=accepted, t_fixed_s=0.01, t_token_s=0.0001,
        t_draft_s=draw(st.sampled_from([0.0, 0.002])))


@grade(simulate_generation, "correctness", points=3,
       hint="Replay your steps: is a budget exceeded, a token emitted past max_new_tokens, a block double-booked?")
@settings(max_examples=20)
@given(case=workloads())
def test_random_workloads(case):
    """Random small workloads against the grader's model, step by step; invariants of every step."""
    reqs, budget, max_seqs, blocks, bs, kw = case
    got = run_case(reqs, budget, max_seqs, blocks, bs, **kw)
    what = label(reqs, budget, max_seqs, blocks, bs, **kw)
    g = kw["spec_gamma"]
    last = -1.0
    for k, s in enumerate(got["steps"]):
        assert sum(s["scheduled"].values()) <= budget, f"{what}: step {k} schedules more than the budget"
        assert s["t_start"] >= last, f"{what}: step {k} starts before the previous one"
        last = s["t_end"]
    for i, (_, p, n) in enumerate(reqs):
        assert sum(s["emitted"].get(i, 0) for s in got["steps"]) == n, f"{what}: request {i} emits {n} tokens"
        assert -(-(p + n - 1 + g) // bs) <= blocks
        assert got["requests"][i]["ttft_s"] >= 0


@grade(simulate_generation, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_sim_rejects():
    ok = dict(t_fixed_s=0.01)
    for args, kwargs, name in (
        (([], 256, 8, 64, 16), {}, "requests"),
        (([(0, 100)], 256, 8, 64, 16), {}, "requests"),
        (([(0, 100.0, 4)], 256, 8, 64, 16), {}, "requests"),
        (([(0, 100, 0)], 256, 8, 64, 16), {}, "requests"),
        (([(-1, 100, 4)], 256, 8, 64, 16), {}, "requests"),
        (([(0, 1000, 4)], 256, 8, 8, 16), {}, "requests"),  # 63 blocks > 8
        ((HAND, 0, 8, 64, 16), {}, "token_budget"),
        ((HAND, 256, 8, 64, 16), {"chunked_prefill": False}, "token_budget"),
        ((HAND, 4, 8, 64, 16), {"spec_gamma": 4}, "token_budget"),
        ((HAND, 256, True, 64, 16), {}, "max_num_seqs"),
        ((HAND, 256, 8, 64, 0), {}, "block_size"),
        ((HAND, 256, 8, 64, 16), {"spec_gamma": 2, "spec_accepted": (3,)}, "spec_accepted"),
        ((HAND, 256, 8, 64, 16), {"spec_gamma": 2, "spec_accepted": (-1,)}, "spec_accepted"),
        ((HAND, 256, 8, 64, 16), {"t_token_s": -0.1, **ok}, "t_token_s"),
        ((HAND, 256, 8, 64, 16), {"t_fixed_s": math.nan}, "t_fixed_s"),
    ):
        assert_rejects(simulate_generation, args, name, kwargs)
    try:
        simulate_generation(HAND, 256, 8, 64, 16, max_steps=2)
    except RuntimeError:
        pass
    else:
        raise AssertionError("simulate_generation(HAND, ..., max_steps=2) should raise RuntimeError after 2 steps")
