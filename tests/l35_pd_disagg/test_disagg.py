"""L35 · KV transfer bytes and time, layer-wise overlap on one link, P:D ratio, xPyD plans, Mooncake placement."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_number, assert_rejects_all, grade, learner

UNIT = "l35_pd_disagg"
kv_transfer_bytes = learner(UNIT, "disagg", "kv_transfer_bytes")
kv_transfer_seconds = learner(UNIT, "disagg", "kv_transfer_seconds")
layerwise_exposed_seconds = learner(UNIT, "disagg", "layerwise_exposed_seconds")
pd_ratio = learner(UNIT, "disagg", "pd_ratio")
plan_xpyd = learner(UNIT, "disagg", "plan_xpyd")
conductor_pick = learner(UNIT, "disagg", "conductor_pick")

REL = 1e-12
LLAMA70B = (80, 8, 128)  # layers, KV heads, head_dim
KV_32K = 10_737_418_240


def dec(x: float | int) -> Fraction:
    """The decimal the test typed, exactly."""
    return Fraction(x) if isinstance(x, int) else Fraction(str(x))


# ---- kv_transfer_bytes, kv_transfer_seconds ------------------------------------------------------------


@grade(kv_transfer_bytes, "correctness", points=2, hint="How many tensors per layer does a token cache, K and V?")
@settings(max_examples=40)
@given(n=st.integers(0, 300_000), layers=st.integers(1, 128), heads=st.integers(1, 64),
       d=st.sampled_from([64, 80, 128, 256]), e=st.sampled_from([1, 2, 4]), frac=st.floats(0, 1))
def test_kv_transfer_bytes(n, layers, heads, d, e, frac):
    """70B: 327,680 B/token; 4K 1,342,177,280; 32K 10,737,418,240; 128K 42,949,672,960; fp8 half; 2K of 4K cached."""
    for args, kw, want in [((1, *LLAMA70B), {}, 327_680), ((4096, *LLAMA70B), {}, 1_342_177_280),
                           ((32_768, *LLAMA70B), {}, KV_32K), ((131_072, *LLAMA70B), {}, 42_949_672_960),
                           ((32_768, *LLAMA70B, 1), {}, KV_32K // 2),
                           ((4096, *LLAMA70B), {"cached_tokens": 2048}, 671_088_640)]:
        call = f"kv_transfer_bytes{args}" + (f" with {kw}" if kw else "")
        assert_exact(kv_transfer_bytes(*args, **kw), want, call, why="2 (K and V) · L · H_kv · d · bytes per token",
                     unit="B")
    cached = int(n * frac)
    assert_exact(kv_transfer_bytes(n, layers, heads, d, e, cached), 2 * layers * heads * d * e * (n - cached),
                 f"kv_transfer_bytes({n}, {layers}, {heads}, {d}, {e}, cached_tokens={cached})",
                 why="only the tokens the decode node does not hold travel", unit="B")


@grade(kv_transfer_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_kv_transfer_bytes_rejects():
    assert_rejects_all(kv_transfer_bytes, [((4096, *LLAMA70B, 2, 4097), "cached_tokens"),
                                           ((4096, 0, 8, 128), "n_layers"), ((4096.0, *LLAMA70B), "n_tokens"),
                                           ((4096, 80, 8, 128, 0), "elem_bytes")])


@grade(kv_transfer_seconds, "correctness", points=2,
       hint="Is 32K tokens of 70B KV 10 GB or 10 GiB? Divide the exact bytes by the link's bytes per second.")
@settings(max_examples=40)
@given(b=st.integers(0, 10**12), link=st.floats(1e6, 1e12), lat=st.floats(0, 0.01))
def test_kv_transfer_seconds(b, link, lat):
    """32K fp16 over 45 GB/s 238.6 ms, fp8 119.3 ms, over 11 GB/s 976.1 ms (the lecture's "10 GB" gives 222/909)."""
    for args, printed in [((KV_32K, 45e9), 0.2386), ((KV_32K // 2, 45e9), 0.1193), ((KV_32K, 11e9), 0.9761)]:
        got = kv_transfer_seconds(*args)
        assert_number(got, args[0] / args[1], f"kv_transfer_seconds{args}", rel=REL)
        assert abs(got - printed) < 5e-5, f"kv_transfer_seconds{args} = {got} s, expected {printed} s"
    assert_number(kv_transfer_seconds(KV_32K, 45e9, 0.002), KV_32K / 45e9 + 0.002,
                  "kv_transfer_seconds(10737418240, 45e9, 0.002): latency is added once", rel=REL)
    assert_number(kv_transfer_seconds(b, link, lat), lat + b / link, f"kv_transfer_seconds({b}, {link!r}, {lat!r})",
                  rel=REL)


@grade(kv_transfer_seconds, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_kv_transfer_seconds_rejects():
    assert_rejects_all(kv_transfer_seconds, [((KV_32K, 0.0), "link_bytes_per_s"), ((KV_32K, 45e9, -1e-3), "latency_s"),
                                             ((1.5e9, 45e9), "n_bytes"), ((KV_32K, float("inf")), "link_bytes_per_s")])


# ---- layerwise_exposed_seconds ---------------------------------------------------------------------


def one_link(layers: int, t_c: Fraction, t_x: Fraction) -> Fraction:
    """Event by event: layer i is computed at (i + 1)·t_c, sent when the link is free; exposed = end − L·t_c."""
    link_free = Fraction(0)
    for i in range(layers):
        link_free = max((i + 1) * t_c, link_free) + t_x
    return link_free - layers * t_c


def check_layerwise(layers: int, t_c: float, size: int, link: float) -> dict:
    call = f"layerwise_exposed_seconds({layers}, {t_c!r}, {size}, {link!r})"
    got = layerwise_exposed_seconds(layers, t_c, size, link)
    assert isinstance(got, dict), f"{call} = {got!r}, expected a dict"
    t_x = Fraction(size) / Fraction(link)
    eager = layers * t_x
    want = {"transfer_per_layer_s": t_x, "eager_s": eager, "layerwise_s": one_link(layers, Fraction(t_c), t_x)}
    for key, value in want.items():
        assert_number(got.get(key), float(value), f"{call}[{key!r}]", rel=REL, abs_tol=1e-12 * float(eager))
    return got


@grade(layerwise_exposed_seconds, "correctness", points=3,
       hint="The link carries one layer at a time: what happens when a layer's transfer outlasts a layer's compute?")
def test_layerwise_worked():
    """80 × 128 MiB at 48 GB/s, 3.5 ms/layer: 2.796 ms exposed vs 223.7 ms eager; at 12 GB/s: 618.3 ms."""
    fast = check_layerwise(80, 0.0035, 134_217_728, 48e9)
    assert abs(fast["layerwise_s"] - 0.002796) < 5e-7 and abs(fast["eager_s"] - 0.2237) < 5e-5
    slow = check_layerwise(80, 0.0035, 134_217_728, 12e9)
    assert abs(slow["layerwise_s"] - 0.6183) < 5e-5, (
        f"layerwise_exposed_seconds(80, 0.0035, 134217728, 12e9)['layerwise_s'] = {slow['layerwise_s']} s, expected "
        "0.6183 s: at 11.18 ms per layer the transfers queue on the link, only the first starts on time")
    check_layerwise(1, 0.0035, 134_217_728, 12e9)
    check_layerwise(80, 0.0, 134_217_728, 48e9)


@grade(layerwise_exposed_seconds, "correctness", points=2, hint="Is the last layer's transfer ever hidden?")
@settings(max_examples=40)
@given(layers=st.integers(1, 128), t_c=st.floats(0, 0.02), size=st.integers(0, 10**9),
       link=st.sampled_from([11e9, 12e9, 25e9, 45e9, 48e9, 100e9]))
def test_layerwise_one_link(layers, t_c, size, link):
    """Event-by-event reference; layerwise_s <= eager_s, and == t_x when t_x <= t_c."""
    got = check_layerwise(layers, t_c, size, link)
    assert got["layerwise_s"] <= got["eager_s"] * (1 + 1e-12), "layer-wise can never expose more than eager"
    if got["transfer_per_layer_s"] <= t_c:
        assert_number(got["layerwise_s"], got["transfer_per_layer_s"], "layerwise_s when t_x <= t_c (the last layer)",
                      rel=REL)


@grade(layerwise_exposed_seconds, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
def test_layerwise_rejects():
    assert_rejects_all(layerwise_exposed_seconds, [((0, 0.0035, 1 << 27, 48e9), "n_layers"),
                                                   ((80, -0.1, 1 << 27, 48e9), "layer_compute_s"),
                                                   ((80, 0.0035, 1.3e8, 48e9), "layer_bytes"),
                                                   ((80, 0.0035, 1 << 27, 0.0), "link_bytes_per_s")])


# ---- pd_ratio ------------------------------------------------------------------------------------


@grade(pd_ratio, "correctness", points=2,
       hint="How many requests per second does one prefill instance finish, and one decode instance?")
@settings(max_examples=40)
@given(lin=st.integers(1, 100_000), lout=st.integers(1, 100_000), tp=st.floats(100, 1e5), td=st.floats(10, 1e4))
def test_pd_ratio(lin, lout, tp, td):
    """§5.3 (Θ_P 4000, Θ_D 500): 8000 in / 500 out → 0.5; 1000 in / 4000 out → 32."""
    assert_number(pd_ratio(8000, 500, 4000, 500), 0.5, "pd_ratio(8000, 500, 4000, 500): 2 prefill per decode", rel=REL)
    assert_number(pd_ratio(1000, 4000, 4000, 500), 32.0, "pd_ratio(1000, 4000, 4000, 500)", rel=REL)
    assert_number(pd_ratio(lin, lout, tp, td), lout / lin * tp / td, f"pd_ratio({lin}, {lout}, {tp!r}, {td!r})",
                  rel=1e-12)


@grade(pd_ratio, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_pd_ratio_rejects():
    assert_rejects_all(pd_ratio, [((0, 500, 4000, 500), "l_in"), ((8000, 500, 4000, 0), "decode_tok_per_s"),
                                  ((8000, -1, 4000, 500), "l_out"),
                                  ((8000, 500, float("nan"), 500), "prefill_tok_per_s")])


# ---- plan_xpyd ----------------------------------------------------------------------------------


def plan_oracle(lam, lin, lout, tp, ttft_slo, kvb, link, base, per, tpot_slo, cap) -> dict:
    """The contract on exact decimals: M/D/1 prefill queues, the largest decode batch, Little's law."""
    lam, tp, ttft_slo, link = dec(lam), dec(tp), dec(ttft_slo), dec(link)
    base, per, tpot_slo = dec(base), dec(per), dec(tpot_slo)
    s, transfer = Fraction(lin) / tp, Fraction(kvb * lin) / link

    def ttft(x: int) -> Fraction | None:
        rho = lam * s / x
        return None if rho >= 1 else rho * s / (2 * (1 - rho)) + s + transfer

    x = 1
    while ttft(x) is None or ttft(x) > ttft_slo:
        x += 1
    b = min(math.floor((tpot_slo - base) / per), cap // (lin + lout))
    tpot = base + per * b
    y = -(-(lam * (lout - 1) * tpot) // b)
    return {"n_prefill": x, "n_decode": int(y), "ttft": ttft(x), "tpot": tpot, "rho": lam * s / x, "b": b,
            "ttft_before": ttft(x - 1) if x > 1 else None}


WORKED_PLAN = dict(lin=2000, lout=257, tp=10_000, ttft_slo=0.5, kvb=327_680, link=45e9, base=0.02, per=0.00025,
                   tpot_slo=0.05, cap=1_000_000)


def check_plan(lam: float, p: dict, why: str = "") -> dict:
    args = (lam, p["lin"], p["lout"], p["tp"], p["ttft_slo"], p["kvb"], p["link"], p["base"], p["per"],
            p["tpot_slo"], p["cap"])
    call = f"plan_xpyd{args}" + (f" ({why})" if why else "")
    got = plan_xpyd(*args)
    want = plan_oracle(*args)
    assert isinstance(got, dict), f"{call} = {got!r}, expected a dict"
    ratio = f"{want['n_prefill']}P{want['n_decode']}D"
    assert (got.get("n_prefill"), got.get("n_decode"), got.get("ratio")) == (want["n_prefill"], want["n_decode"],
                                                                            ratio), (
        f"{call} planned {got.get('ratio')!r} ({got.get('n_prefill')} prefill, {got.get('n_decode')} decode), expected "
        f"{ratio}: the fewest prefill instances whose M/D/1 TTFT (W + s + transfer) is within the SLO, decode by "
        "Little's law y = ceil(λ · (l_out − 1) · TPOT / B); compare and round on exact decimals")
    assert_exact(got.get("decode_batch"), want["b"], f"{call}['decode_batch']",
                 why="min(floor((TPOT_SLO − base) / per_seq), floor(capacity / (l_in + l_out)))", unit="")
    for key, value in (("ttft_s", want["ttft"]), ("tpot_s", want["tpot"]), ("prefill_utilization", want["rho"])):
        assert_number(got.get(key), float(value), f"{call}[{key!r}]", rel=REL)
    return want


@grade(plan_xpyd, "correctness", points=3,
       hint="With one prefill instance at ρ 0.8, how long does the average request queue (M/D/1)?")
def test_plan_xpyd_worked():
    """λ 4/s → 2P1D (ρ 0.4, TTFT 0.2812 s, B 120); λ 30/s → 9P4D (TTFT 0.4146 s)."""
    want = check_plan(4, WORKED_PLAN, "the contract's worked plan")
    assert abs(float(want["ttft"]) - 0.2812) < 5e-5 and want["b"] == 120
    check_plan(30, WORKED_PLAN, "λ 30/s")
    check_plan(4, {**WORKED_PLAN, "cap": 200_000}, "the KV capacity limits the batch: 200,000 // 2257 = 88")


@grade(plan_xpyd, "correctness", points=2,
       hint="In floats, is (0.03 − 0.02) / 0.0001 equal to 100? Is 0.466 <= 0.466 after a few float operations?")
def test_plan_xpyd_exact_on_decimals():
    """TTFT exactly on the SLO with 3 instances (floats say 0.4660000000000001: 4P); batch (0.03 − 0.02)/0.0001
    is exactly 100 (floats: 99.99999999999999, floor 99)."""
    trap = dict(lin=2000, lout=3, tp=5000, ttft_slo=0.466, kvb=327_680, link=40.96e9, base=0.02, per=0.0001,
                tpot_slo=0.03, cap=1_000_000)
    want = check_plan(1.5, trap, "TTFT = 0.05 + 0.4 + 0.016 = 0.466 s exactly at 3 instances; B = 100 exactly")
    assert (want["n_prefill"], want["b"]) == (3, 100)


@grade(plan_xpyd, "correctness", points=3, hint="Would one prefill instance fewer still meet the TTFT SLO?")
@settings(max_examples=40)
@given(lam=st.sampled_from([0.5, 1, 2.5, 4, 7.5, 12, 30, 55.5]), lin=st.sampled_from([128, 500, 2000, 8000]),
       lout=st.integers(2, 2000), tp=st.sampled_from([5000, 10_000, 40_000]), slack=st.sampled_from([0.05, 0.3, 1.5]),
       per=st.sampled_from([0.0001, 0.00025, 0.001]), extra=st.sampled_from([0.001, 0.01, 0.03]))
def test_plan_xpyd_meets_both_slos(lam, lin, lout, tp, slack, per, extra):
    idle = lin / tp + 327_680 * lin / 45e9
    p = dict(lin=lin, lout=lout, tp=tp, ttft_slo=round(idle + slack, 4), kvb=327_680, link=45e9, base=0.02, per=per,
             tpot_slo=round(0.02 + per + extra, 5), cap=2_000_000)
    want = check_plan(lam, p)
    assert want["ttft"] <= dec(p["ttft_slo"])
    assert want["ttft_before"] is None or want["ttft_before"] > dec(p["ttft_slo"])


@grade(plan_xpyd, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_plan_xpyd_rejects():
    w = WORKED_PLAN
    base = [4, w["lin"], w["lout"], w["tp"], w["ttft_slo"], w["kvb"], w["link"], w["base"], w["per"], w["tpot_slo"],
            w["cap"]]

    def with_(i: int, v: object) -> tuple:
        return tuple(base[:i] + [v] + base[i + 1:])

    assert_rejects_all(plan_xpyd, [(with_(2, 1), "l_out"), (with_(4, 0.2), "ttft_slo_s"), (with_(4, 0.2145), None),
                                   (with_(9, 0.02), "tpot_slo_s"), (with_(10, 2000), "decode_kv_capacity_tokens"),
                                   (with_(1, 2000.0), "l_in"), (with_(0, 0.0), "arrival_rps")])


# ---- conductor_pick -----------------------------------------------------------------------------


def pick_oracle(hits, queues, d, alpha, slo) -> int | None:
    scores = [(1 - dec(h)) * dec(d) + dec(alpha) * dec(q) for h, q in zip(hits, queues, strict=True)]
    best = scores.index(min(scores))
    return None if dec(queues[best]) + (1 - dec(hits[best])) * dec(d) > dec(slo) else best


@grade(conductor_pick, "correctness", points=2,
       hint="Is the instance with the best cache hit always the best choice when its queue is long?")
def test_conductor_pick_worked():
    """([0.8, 0, 0.5], [0.3, 0.05, 0.1], 0.4, 1, 1) → 2 (scores 0.38, 0.45, 0.3); ([0, 0], [2, 3], 0.4, 1, 1) → None."""
    for args, want in [(([0.8, 0, 0.5], [0.3, 0.05, 0.1], 0.4, 1, 1), 2), (([0, 0], [2, 3], 0.4, 1, 1), None),
                       (([0.8, 0, 0.5], [0.3, 0.05, 0.1], 0.4, 0.1, 1), 0), (([0.5], [0.2], 0.4, 1, 0.4), 0),
                       (([0.5], [0.2], 0.4, 1, 0.39), None), (([0.5], [0.2], 0.4, 0.5, 0.35), None)]:
        got = conductor_pick(*args)
        assert got == want, (f"conductor_pick{args} = {got!r}, expected {want!r}: argmin (1 − H)·D + α·Q, then None "
                             "if that instance's Q + (1 − H)·D exceeds the SLO")


@grade(conductor_pick, "correctness", points=2, hint="Are 0.3 + 0.1 and 0.4 equal? On decimals, yes.")
@settings(max_examples=40)
@given(data=st.data(), n=st.integers(1, 6))
def test_conductor_pick_exact(data, n):
    """Exact ties go to the lowest index; a TTFT exactly on the SLO is accepted (floats break both)."""
    for args, want in [(([0.7, 0.6], [0.1, 0.0], 1, 1, 5), 0), (([0.7], [0.1], 1, 1, 0.4), 0),
                       (([0.6, 0.7], [0.0, 0.1], 1, 1, 5), 0)]:
        got = conductor_pick(*args)
        assert got == want, f"conductor_pick{args} = {got!r}, expected {want!r} (compare on the exact decimals)"
    tenths = st.integers(0, 10).map(lambda k: k / 10)
    hits = data.draw(st.lists(tenths, min_size=n, max_size=n), label="hit_ratios")
    queues = data.draw(st.lists(st.integers(0, 20).map(lambda k: k / 20), min_size=n, max_size=n), label="queue_s")
    d, alpha, slo = data.draw(st.sampled_from([0.2, 0.4, 1.0])), data.draw(st.sampled_from([0.5, 1, 2])), \
        data.draw(st.sampled_from([0.3, 0.5, 0.7, 1.0]))
    got = conductor_pick(hits, queues, d, alpha, slo)
    want = pick_oracle(hits, queues, d, alpha, slo)
    assert got == want, f"conductor_pick({hits}, {queues}, {d}, {alpha}, {slo}) = {got!r}, expected {want!r}"


@grade(conductor_pick, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
def test_conductor_pick_rejects():
    assert_rejects_all(conductor_pick, [(([], [], 0.4, 1, 1), "hit_ratios"),
                                        (([0.5, 0.2], [0.1], 0.4, 1, 1), "queue_s"),
                                        (([1.5], [0.1], 0.4, 1, 1), "hit_ratios"),
                                        (([0.5], [-0.1], 0.4, 1, 1), "queue_s"),
                                        (([0.5], [0.1], -0.4, 1, 1), "prefill_s")])
