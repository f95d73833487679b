"""L31 · MoE as data: top-k routing, exact expert capacity and drops, combine, the all-to-all's bytes per rank."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "l31_pipeline_moe"
topk_route = learner(UNIT, "moe", "topk_route")
expert_capacity = learner(UNIT, "moe", "expert_capacity")
apply_capacity = learner(UNIT, "moe", "apply_capacity")
moe_combine = learner(UNIT, "moe", "moe_combine")
all_to_all_bytes = learner(UNIT, "moe", "all_to_all_bytes")

REL = 1e-12


# ---- the course's lab 4.1, rebuilt: random.seed(42), 2 ranks × 3 tokens, h = 4, 4 experts, top-2 ------------


def lab_41() -> tuple[list[list[float]], list[list[float]]]:
    """The lab's tokens (both ranks, rank 0 first) and their router logits, drawn exactly as the lab draws them."""
    rng = random.Random(42)
    gating = [[rng.gauss(0, 1) for _ in range(4)] for _ in range(4)]
    tokens = [[round(rng.uniform(0.5, 2.0), 2) for _ in range(4)] for _ in range(6)]
    logits = [[sum(x[i] * gating[i][j] for i in range(4)) for j in range(4)] for x in tokens]
    return tokens, logits


LAB_EXPERTS = [[3, 2], [3, 2], [3, 0], [3, 0], [3, 0], [3, 0]]
LAB_SCALE = [1.0, 2.0, 3.0, 4.0]


def route_oracle(row: list[float], k: int) -> tuple[list[int], list[float]]:
    """k times: the largest logit left, the lowest index among equals; gates as exp(l − max) over the k chosen."""
    left, chosen = list(range(len(row))), []
    for _ in range(k):
        best = min(left, key=lambda e: (-row[e], e))
        chosen.append(best)
        left.remove(best)
    top = max(row[e] for e in chosen)
    w = [math.exp(row[e] - top) for e in chosen]
    return chosen, [v / math.fsum(w) for v in w]


def capacity_oracle(t: int, e: int, k: int, cf: float) -> int:
    num = Fraction(str(cf)) * k * t
    return -(-num.numerator // (num.denominator * e))


def kept_oracle(experts: list[list[int]], e: int, cf: float) -> tuple[int, list[list[bool]]]:
    c = capacity_oracle(len(experts), e, len(experts[0]), cf)
    queue = sorted((j, t) for t in range(len(experts)) for j in range(len(experts[0])))  # choice rank, then token
    kept = [[False] * len(experts[0]) for _ in experts]
    seen = [0] * e
    for j, t in queue:
        seen[experts[t][j]] += 1
        kept[t][j] = seen[experts[t][j]] <= c
    return c, kept


# ---- topk_route --------------------------------------------------------------------------------------------


@grade(topk_route, "correctness", points=2,
       hint="Are the gates a softmax over all E experts, or over the k you kept? And who wins a tie?")
def test_topk_lab_41_and_ties():
    """Lab 4.1: token 0 → experts [3, 2], gates (0.7857, 0.2143); token 4 → [3, 0] (0.5201, 0.4799).

    Ties go to the lower index."""
    _, logits = lab_41()
    experts, gates = topk_route(logits, 2)
    assert [list(r) for r in experts] == LAB_EXPERTS, f"topk_route(<lab 4.1 logits>, 2) experts {experts!r}, " \
                                                      f"expected {LAB_EXPERTS}"
    for t, row in enumerate(logits):
        _, want = route_oracle(row, 2)
        for j in range(2):
            assert_number(gates[t][j], want[j], f"topk_route(<lab 4.1>, 2) gates[{t}][{j}]", rel=REL)
    for t, printed in ((0, (0.7857, 0.2143)), (4, (0.5201, 0.4799))):
        assert all(abs(g - w) < 5e-5 for g, w in zip(gates[t], printed, strict=True)), (
            f"gates[{t}] = {gates[t]}, the lab prints {printed}")
    for row, k, want in (([1.0, 3.0, 3.0, 0.0], 1, [1]), ([1.0, 3.0, 3.0, 0.0], 2, [1, 2]),
                         ([2.0, 2.0, 2.0, 2.0], 3, [0, 1, 2]), ([0.0, 5.0, 0.0, 5.0], 3, [1, 3, 0])):
        got, g = topk_route([row], k)
        assert list(got[0]) == want, (f"topk_route([{row}], {k}) experts {got[0]}, expected {want}: descending logits, "
                                      "a tie goes to the lower expert index")
        assert_number(math.fsum(g[0]), 1.0, f"sum of topk_route([{row}], {k}) gates", rel=REL)


@grade(topk_route, "correctness", points=2, hint="Sort by (−logit, expert index); softmax the k kept logits, "
                                                 "subtracting their max first.")
@settings(max_examples=20)
@given(rows=st.integers(1, 6).flatmap(lambda e: st.lists(st.lists(
    st.one_of(st.integers(-3, 3).map(float), st.floats(-30, 30)), min_size=e, max_size=e), min_size=1, max_size=6)),
    data=st.data())
def test_topk_matches_oracle(rows, data):
    k = data.draw(st.integers(1, len(rows[0])))
    experts, gates = topk_route(rows, k)
    for t, row in enumerate(rows):
        want_e, want_g = route_oracle(row, k)
        assert list(experts[t]) == want_e, f"topk_route({rows}, {k}) token {t}: experts {experts[t]}, expected {want_e}"
        for j in range(k):
            assert_number(gates[t][j], want_g[j], f"topk_route({rows}, {k}) gates[{t}][{j}]", rel=REL)


@grade(topk_route, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_topk_rejects_bad_arguments():
    assert_rejects_all(topk_route, [
        (([[1.0, 2.0]], 3), "k"),
        (([[1.0, 2.0]], 0), "k"),
        (([[1.0, 2.0]], 1.0), "k"),
        (([[1.0, 2.0], [1.0]], 1), "logits"),
        (([[1.0, float("nan")]], 1), "logits"),
        (([], 1), "logits"),
    ])


# ---- expert_capacity ---------------------------------------------------------------------------------------

# (T, E, k, cf) where ceil of the float product is one too many: exact on the decimal cf, these are whole numbers.
FLOAT_TRAPS = [(50, 2, 2, 1.1), (100, 4, 2, 1.1), (100, 2, 1, 2.2), (50, 4, 2, 2.2), (100, 8, 2, 2.2)]


@grade(expert_capacity, "correctness", points=2,
       hint="What does 1.1 * 2 * 50 / 2 give in floating point? Compute the ceiling on the decimal value of cf.")
def test_capacity_worked_and_float_traps():
    """(50, 2, 2, 1.1) → 55, where math.ceil of the float product gives 56; the lab's (6, 4, 2, cf 1.0) → 3."""
    assert_exact(expert_capacity(50, 2, 2, 1.1), 55, "expert_capacity(50, 2, 2, 1.1)",
                 why="1.1·2·50/2 is exactly 55 (in floats 55.00000000000001)")
    assert_exact(expert_capacity(6, 4, 2, 1.0), 3, "expert_capacity(6, 4, 2, 1.0)", why="k·cf·T/E = 2·6/4 = 3")
    assert_exact(expert_capacity(6, 4, 2, 0.5), 2, "expert_capacity(6, 4, 2, 0.5)", why="ceil(1.5)")
    assert_exact(expert_capacity(10, 4, 1, 1.25), 4, "expert_capacity(10, 4, 1, 1.25)", why="ceil(3.125), top-1")
    for t, e, k, cf in FLOAT_TRAPS:
        assert math.ceil(cf * k * t / e) != capacity_oracle(t, e, k, cf)  # the trap is real
        call = f"expert_capacity({t}, {e}, {k}, {cf})"
        assert_exact(expert_capacity(t, e, k, cf), capacity_oracle(t, e, k, cf), call,
                     why="ceil(cf·k·T/E) on the decimal cf")


@grade(expert_capacity, "correctness", points=1, hint="Top-2 routing makes 2·T assignments: does your formula know?")
@settings(max_examples=20)
@given(t=st.integers(1, 5000), e=st.integers(1, 64), data=st.data(),
       cf=st.decimals(min_value="0.05", max_value="4", places=2).map(float))
def test_capacity_exact(t, e, data, cf):
    k = data.draw(st.integers(1, min(e, 8)))
    assert_exact(expert_capacity(t, e, k, cf), capacity_oracle(t, e, k, cf), f"expert_capacity({t}, {e}, {k}, {cf})",
                 why="ceil(cf·k·T/E), exact on the decimal cf")


@grade(expert_capacity, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_capacity_rejects_bad_arguments():
    assert_rejects_all(expert_capacity, [
        ((50, 2, 2, 0.0), "capacity_factor"),
        ((50, 2, 2, -1.0), "capacity_factor"),
        ((50, 2, 2, float("inf")), "capacity_factor"),
        ((50, 2, 3, 1.0), "k"),
        ((50, 0, 1, 1.0), "n_experts"),
        ((50.0, 2, 2, 1.0), "n_tokens"),
    ])


# ---- apply_capacity ----------------------------------------------------------------------------------------


def check_capacity(got: object, experts: list[list[int]], e: int, cf: float, call: str) -> None:
    c, kept = kept_oracle(experts, e, cf)
    assert isinstance(got, dict), f"{call} = {got!r}: expected a dict"
    assert_exact(got["capacity"], c, f"{call}['capacity']", why="ceil(cf·k·T/E) on the decimal cf")
    load = [sum(kept[t][j] for t in range(len(experts)) for j in range(len(experts[0])) if experts[t][j] == x)
            for x in range(e)]
    assert list(got["tokens_per_expert"]) == load, f"{call}['tokens_per_expert'] = {got['tokens_per_expert']}, " \
                                                   f"expected {load}"
    got_kept = [[bool(v) for v in row] for row in got["kept"]]
    for t, row in enumerate(kept):
        for j, keep in enumerate(row):
            if got_kept[t][j] != keep:
                raise AssertionError(
                    f"{call}['kept'][{t}][{j}] = {got_kept[t][j]} (token {t}'s choice {j}, expert {experts[t][j]}), "
                    f"expected {keep}: every first choice in token order is served before any second choice")
    dropped = sum(not v for row in kept for v in row)
    assert_exact(got["dropped"], dropped, f"{call}['dropped']", why="assignments dropped (T·k − kept)")
    lost = [t for t, row in enumerate(kept) if not any(row)]
    assert list(got["dropped_tokens"]) == lost, f"{call}['dropped_tokens'] = {got['dropped_tokens']}, expected " \
                                                f"{lost}: tokens with no choice kept"


@grade(apply_capacity, "correctness", points=3,
       hint="Is token 0's second choice more important than token 5's first choice?")
def test_apply_capacity_lab_41():
    """Lab routes, cf 1.0: C 3, [3, 0, 2, 3], 4 dropped, token 5 fully dropped; cf 0.5: C 2, 6 dropped, tokens 4, 5."""
    for cf, c, load, dropped, lost in ((1.0, 3, [3, 0, 2, 3], 4, [5]), (0.5, 2, [2, 0, 2, 2], 6, [4, 5])):
        call = f"apply_capacity(<lab 4.1 routes>, 4, {cf})"
        got = apply_capacity(LAB_EXPERTS, 4, cf)
        assert_exact(got["capacity"], c, f"{call}['capacity']", why="ceil(cf·k·T/E) with k = 2")
        assert list(got["tokens_per_expert"]) == load, f"{call}['tokens_per_expert'] = {got['tokens_per_expert']}, " \
                                                       f"expected {load}"
        assert_exact(got["dropped"], dropped, f"{call}['dropped']", why="assignments past an expert's capacity")
        assert list(got["dropped_tokens"]) == lost, f"{call}['dropped_tokens'] = {got['dropped_tokens']}, " \
                                                    f"expected {lost}"
        check_capacity(got, LAB_EXPERTS, 4, cf, call)
    trap = [[t % 2, 1 - t % 2] for t in range(50)]
    check_capacity(apply_capacity(trap, 2, 1.1), trap, 2, 1.1, "apply_capacity(<50 tokens, top-2 of 2>, 2, 1.1)")


@grade(apply_capacity, "correctness", points=2,
       hint="Each expert keeps at most C; every kept plus dropped assignment is one of T·k; a dropped one found "
            "its expert full.")
@settings(max_examples=25)
@given(e=st.integers(1, 6), data=st.data(), cf=st.sampled_from([0.25, 0.5, 0.8, 1.0, 1.1, 1.25, 2.0]))
def test_apply_capacity_invariants(e, data, cf):
    k = data.draw(st.integers(1, e))
    experts = data.draw(st.lists(st.permutations(range(e)).map(lambda r: list(r[:k])), min_size=1, max_size=30))
    got = apply_capacity(experts, e, cf)
    c = capacity_oracle(len(experts), e, k, cf)
    load = list(got["tokens_per_expert"])
    call = f"apply_capacity({experts}, {e}, {cf})"
    assert max(load) <= c, f"{call}: an expert keeps {max(load)} > C = {c}"
    assert sum(load) + got["dropped"] == len(experts) * k, f"{call}: kept {sum(load)} + dropped {got['dropped']} " \
                                                           f"should be T·k = {len(experts) * k}"
    check_capacity(got, experts, e, cf, call)


@grade(apply_capacity, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_apply_capacity_rejects_bad_arguments():
    assert_rejects_all(apply_capacity, [
        (([[0, 4]], 4, 1.0), "experts"),
        (([[0, 0]], 4, 1.0), "experts"),
        (([[0, 1], [2]], 4, 1.0), "experts"),
        (([[0, 1]], 4, 0.0), "capacity_factor"),
        (([[0, 1]], 0, 1.0), "n_experts"),
    ])


# ---- moe_combine -------------------------------------------------------------------------------------------


def combine_oracle(x, experts, gates, kept, scale):
    return [[math.fsum(v * scale[experts[t][j]] * gates[t][j] for j in range(len(experts[t])) if kept[t][j])
             for v in row] for t, row in enumerate(x)]


def check_rows(got, want, call):
    assert len(got) == len(want), f"{call} has {len(got)} rows, expected {len(want)}"
    for t, (a, b) in enumerate(zip(got, want, strict=True)):
        for d, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_number(u, v, f"{call}[{t}][{d}]", rel=1e-12, abs_tol=1e-12)


@grade(moe_combine, "correctness", points=2,
       hint="A dropped choice contributes nothing here; do the kept gates change when the other one is dropped?")
def test_combine_lab_41_and_drops():
    """Lab 4.1 rank 0 token 0 → [3.142, 5.224, 6.474, 1.931]; with cf 1.0 drops, a kept gate keeps its value."""
    tokens, logits = lab_41()
    experts = [route_oracle(r, 2)[0] for r in logits]
    gates = [route_oracle(r, 2)[1] for r in logits]
    everything = [[True, True]] * 6
    got = moe_combine(tokens, experts, gates, everything, LAB_SCALE)
    assert [round(v, 3) for v in got[0]] == [3.142, 5.224, 6.474, 1.931], (
        f"moe_combine(<lab 4.1>)[0] = {got[0]}, the lab prints [3.142, 5.224, 6.474, 1.931]")
    check_rows(got, combine_oracle(tokens, experts, gates, everything, LAB_SCALE), "moe_combine(<lab 4.1, all kept>)")
    kept = kept_oracle(experts, 4, 1.0)[1]
    check_rows(moe_combine(tokens, experts, gates, kept, LAB_SCALE),
               combine_oracle(tokens, experts, gates, kept, LAB_SCALE), "moe_combine(<lab 4.1, cf 1.0 kept>)")
    alone = moe_combine([[1.0, 2.0]], [[1, 0]], [[0.75, 0.25]], [[False, True]], [2.0, 10.0])
    check_rows(alone, [[0.5, 1.0]], "moe_combine([[1, 2]], [[1, 0]], [[0.75, 0.25]], [[False, True]], [2, 10])")


@grade(moe_combine, "correctness", points=1, hint="Per token: Σ over kept choices of gate · scale[expert] · x.")
@settings(max_examples=15)
@given(e=st.integers(1, 5), data=st.data())
def test_combine_matches_oracle(e, data):
    k = data.draw(st.integers(1, e))
    n = data.draw(st.integers(1, 6))
    h = data.draw(st.integers(1, 5))
    x = data.draw(st.lists(st.lists(st.floats(-10, 10), min_size=h, max_size=h), min_size=n, max_size=n))
    experts = data.draw(st.lists(st.permutations(range(e)).map(lambda r: list(r[:k])), min_size=n, max_size=n))
    gates = data.draw(st.lists(st.lists(st.floats(0, 1), min_size=k, max_size=k), min_size=n, max_size=n))
    kept = data.draw(st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=n, max_size=n))
    scale = data.draw(st.lists(st.floats(-4, 4), min_size=e, max_size=e))
    check_rows(moe_combine(x, experts, gates, kept, scale), combine_oracle(x, experts, gates, kept, scale),
               f"moe_combine({x}, {experts}, {gates}, {kept}, {scale})")


@grade(moe_combine, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_combine_rejects_bad_arguments():
    x, ex, g, kp, sc = [[1.0, 2.0]], [[1, 0]], [[0.75, 0.25]], [[True, True]], [2.0, 10.0]
    assert_rejects_all(moe_combine, [
        ((x, [[1, 2]], g, kp, sc), "experts"),
        ((x, ex, [[0.75]], kp, sc), "gates"),
        ((x, ex, g, [[True]], sc), "kept"),
        ((x + x, ex, g, kp, sc), "experts"),
        ((x, ex, g, kp, []), "expert_scale"),
    ])


# ---- all_to_all_bytes --------------------------------------------------------------------------------------


def a2a_oracle(token_rank, experts, kept, epr, n, h, eb):
    dispatch = [[0] * n for _ in range(n)]
    for t, row in enumerate(experts):
        for j, e in enumerate(row):
            if kept[t][j] and e // epr != token_rank[t]:
                dispatch[token_rank[t]][e // epr] += h * eb
    combine = [list(col) for col in zip(*dispatch, strict=True)]
    return dispatch, combine, [sum(a) + sum(b) for a, b in zip(dispatch, combine, strict=True)]


def check_a2a(got, want, call):
    for key, w in zip(("dispatch", "combine", "sent"), want, strict=True):
        g = [list(r) for r in got[key]] if key != "sent" else list(got[key])
        assert g == w, f"{call}[{key!r}] = {g}, expected {w}" + (
            ": tokens whose expert is on their own rank, and dropped assignments, move nothing" if key == "dispatch"
            else ": the results travel back, the transpose of dispatch" if key == "combine" else "")


@grade(all_to_all_bytes, "correctness", points=2,
       hint="Does a token whose expert is on its own rank cross the network? How many times does a remote one?")
def test_a2a_lab_41_and_course_formula():
    """Lab 4.1 (bf16): dispatch [[0, 40], [24, 0]], 64 B per rank. Uniform top-2, N=4, h=8, 64 tokens/rank:
    sent = 2·(N−1)/N·K·T·h·2 = 3072 B, the course's §2.4 forward formula."""
    call = "all_to_all_bytes([0, 0, 0, 1, 1, 1], <lab routes>, <all kept>, 2, 2, 4, 2)"
    got = all_to_all_bytes([0, 0, 0, 1, 1, 1], LAB_EXPERTS, [[True, True]] * 6, 2, 2, 4, 2)
    check_a2a(got, ([[0, 40], [24, 0]], [[0, 24], [40, 0]], [64, 64]), call)
    kept = kept_oracle(LAB_EXPERTS, 4, 1.0)[1]
    check_a2a(all_to_all_bytes([0, 0, 0, 1, 1, 1], LAB_EXPERTS, kept, 2, 2, 4, 2),
              a2a_oracle([0, 0, 0, 1, 1, 1], LAB_EXPERTS, kept, 2, 2, 4, 2), call.replace("all kept", "cf 1.0 kept"))
    n, k, t, h = 4, 2, 64, 8
    ranks = [r for r in range(n) for _ in range(t)]
    experts = [[((i * k + j) % n) * 2 + j for j in range(k)] for i in range(n * t)]
    got = all_to_all_bytes(ranks, experts, [[True] * k] * (n * t), 2, n, h, 2)
    formula = 2 * (n - 1) * k * t * h * 2 // n
    assert list(got["sent"]) == [formula] * n, (f"uniform top-2 over 4 ranks: sent {got['sent']}, expected {formula} "
                                                "per rank = 2·(N−1)/N·K·T·h·2 B")
    deep = all_to_all_bytes([0], [list(range(8, 72, 8))], [[True] * 8], 8, 9, 7168, 2)
    assert_exact(sum(deep["sent"]), 2 * 8 * 7168 * 2, "a DeepSeek-V3-like token (top-8 on 8 other ranks, h 7168, "
                 "bf16): bytes all ranks send for it in one forward", why="dispatch K·h·2 B from its rank, combine "
                 "K·h·2 B back from the experts' ranks: 229,376 B")


@grade(all_to_all_bytes, "correctness", points=1, hint="dispatch[src][dst] per kept remote assignment; combine is "
                                                       "its transpose.")
@settings(max_examples=15)
@given(n=st.integers(1, 4), epr=st.integers(1, 3), data=st.data())
def test_a2a_matches_oracle(n, epr, data):
    e = n * epr
    k = data.draw(st.integers(1, e))
    count = data.draw(st.integers(1, 12))
    ranks = data.draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count))
    experts = data.draw(st.lists(st.permutations(range(e)).map(lambda r: list(r[:k])), min_size=count,
                                 max_size=count))
    kept = data.draw(st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=count, max_size=count))
    h, eb = data.draw(st.integers(1, 64)), data.draw(st.sampled_from([1, 2, 4]))
    check_a2a(all_to_all_bytes(ranks, experts, kept, epr, n, h, eb), a2a_oracle(ranks, experts, kept, epr, n, h, eb),
              f"all_to_all_bytes({ranks}, {experts}, {kept}, {epr}, {n}, {h}, {eb})")


@grade(all_to_all_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_a2a_rejects_bad_arguments():
    ex, kp = [[0, 3]], [[True, True]]
    assert_rejects_all(all_to_all_bytes, [
        (([2], ex, kp, 2, 2, 4, 2), "token_rank"),
        (([0], [[0, 4]], kp, 2, 2, 4, 2), "experts"),
        (([0], ex, kp, 2, 2, 0, 2), "hidden"),
        (([0], ex, kp, 2, 2, 4, 2.0), "elem_bytes"),
        (([0], ex, kp, 0, 2, 4, 2), "experts_per_rank"),
        (([0, 1], ex, kp, 2, 2, 4, 2), "token_rank"),
    ])
