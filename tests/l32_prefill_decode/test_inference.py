"""L32 · roofline of prefill and decode steps, decode time, request metrics, goodput and percentiles."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GPUS, MODELS
from grader.kit import assert_number, assert_rejects, grade, learner

UNIT = "l32_prefill_decode"
step_roofline = learner(UNIT, "inference", "step_roofline")
decode_step_seconds = learner(UNIT, "inference", "decode_step_seconds")
request_metrics = learner(UNIT, "inference", "request_metrics")
goodput_rps = learner(UNIT, "inference", "goodput_rps")
percentile_nearest_rank = learner(UNIT, "inference", "percentile_nearest_rank")

H100 = GPUS["H100-SXM"]


SECONDS_ABS = 1e-9  # a difference of two times up to 1e4 s carries a few ulps of 1e4 s


def assert_seconds(got: object, want: float, what: str) -> None:
    """A duration derived from timestamps: within ``SECONDS_ABS`` seconds, else within the kit's relative 1e-9."""
    assert_number(got, want, f"{what} in s", abs_tol=SECONDS_ABS)


# ---- step_roofline -----------------------------------------------------------------------------


def check_roofline(got: object, want: dict[str, object], call: str) -> None:
    assert isinstance(got, dict), f"{call}: expected a dict, got {got!r}"
    for key, value in want.items():
        assert key in got, f"{call}: missing key {key!r} (have {sorted(got)})"
        if key == "bound":
            assert got[key] == value, f"{call}['bound'] = {got[key]!r}, expected {value!r}"
        else:
            assert_number(got[key], value, f"{call}[{key!r}]")


def roofline(t: int, peak: float, bw: float, e: int) -> dict[str, object]:
    ai = 2 * t / e
    att = min(peak, ai * bw)
    return {
        "intensity": ai,
        "attainable_flops": att,
        "peak_fraction": att / peak,
        "bound": "compute" if ai >= peak / bw else "memory",
    }


@grade(step_roofline, "correctness", points=3,
       hint="FLOPs per weight byte: 2 FLOPs per parameter per token, elem_bytes per parameter read once.")
def test_roofline_worked_numbers():
    """H100: decode B=1 → 3.35 TFLOPS (0.34 %), B=32 → 107.2, B=128 → 428.8 (43.4 %); prefill S=1024 → compute-bound."""
    peak, bw = H100.bf16_flops, H100.hbm_bytes_per_s
    for t, att, bound in [
        (1, 3.35e12, "memory"),
        (32, 107.2e12, "memory"),
        (128, 428.8e12, "memory"),
        (1024, 989e12, "compute"),
        (296, 989e12, "compute"),
        (295, 988.25e12, "memory"),
    ]:
        check_roofline(
            step_roofline(t, peak, bw),
            {"intensity": float(t), "attainable_flops": att, "peak_fraction": att / peak, "bound": bound},
            f"step_roofline({t}, H100 989e12, 3.35e12)",
        )
    check_roofline(
        step_roofline(128, peak, bw, elem_bytes=1), roofline(128, peak, bw, 1), "step_roofline(128, H100, fp8 weights)"
    )


@grade(step_roofline, "correctness", points=2,
       hint="Attainable is the lower of the two roofs; the bound flips at the ridge peak/bandwidth.")
@given(t=st.integers(1, 10**6), gpu=st.sampled_from(sorted(GPUS)), e=st.sampled_from([1, 2, 4]))
def test_roofline_closed_form(t, gpu, e):
    g = GPUS[gpu]
    check_roofline(
        step_roofline(t, g.bf16_flops, g.hbm_bytes_per_s, e),
        roofline(t, g.bf16_flops, g.hbm_bytes_per_s, e),
        f"step_roofline({t}, {gpu}, elem_bytes={e})",
    )


@grade(step_roofline, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((0, 1e15, 3e12), "n_tokens"),
        ((1, 0, 3e12), "peak_flops"),
        ((1, 1e15, -3e12), "mem_bw"),
        ((1, 1e15, 3e12, 0), "elem_bytes"),
        ((1.0, 1e15, 3e12), "n_tokens"),
    ],
)
def test_roofline_rejects_bad_arguments(args, name):
    assert_rejects(step_roofline, args, name)


# ---- decode_step_seconds -----------------------------------------------------------------------

KV_8B = 2 * MODELS["llama-3-8b"].n_layers * MODELS["llama-3-8b"].n_kv_heads * MODELS["llama-3-8b"].head_dim * 2


@grade(decode_step_seconds, "correctness", points=3, hint="Does a batch of 32 read the weights 32 times, or once?")
def test_decode_worked_numbers():
    """LLaMA-3-8B on an H100: B=1, empty cache → 4.794 ms; B=32 × 8192 tokens of cache (32 GiB) → 15.05 ms."""
    p, bw, weights = MODELS["llama-3-8b"].n_params, H100.hbm_bytes_per_s, 16_060_522_496
    assert_number(decode_step_seconds(p, 1, 0, KV_8B, bw), weights / 3.35e12, "decode_step_seconds(8B, 1, 0, ...)")
    assert_number(
        decode_step_seconds(p, 32, 8192, KV_8B, bw),
        (weights + 34_359_738_368) / 3.35e12,
        "decode_step_seconds(8B, 32, 8192, 131072, 3.35e12)",
    )
    assert_number(decode_step_seconds(p, 64, 0, KV_8B, bw), weights / 3.35e12, "decode_step_seconds(8B, 64, 0, ...)")


@grade(decode_step_seconds, "correctness", points=2,
       hint="Seconds = bytes / (bytes/s); which bytes grow with the batch and which do not?")
@given(
    p=st.integers(0, 10**12),
    b=st.integers(0, 1024),
    ctx=st.integers(0, 2**17),
    kv=st.integers(0, 2**20),
    gpu=st.sampled_from(sorted(GPUS)),
    w=st.sampled_from([1, 2, 4]),
)
def test_decode_closed_form(p, b, ctx, kv, gpu, w):
    bw = GPUS[gpu].hbm_bytes_per_s
    assert_number(
        decode_step_seconds(p, b, ctx, kv, bw, w),
        (p * w + b * ctx * kv) / bw,
        f"decode_step_seconds({p}, {b}, {ctx}, {kv}, {bw:g}, {w})",
    )


@grade(decode_step_seconds, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((10**9, 1, 0, 10, 0.0), "mem_bw"),
        ((-1, 1, 0, 10, 1e12), "n_params"),
        ((10**9, 1, 0, 1.5, 1e12), "kv_bytes_per_token"),
        ((10**9, -1, 0, 10, 1e12), "batch"),
    ],
)
def test_decode_rejects_bad_arguments(args, name):
    assert_rejects(decode_step_seconds, args, name)


# ---- request_metrics ---------------------------------------------------------------------------


def check_metrics(got: object, arrival: float, times: list[float], call: str) -> None:
    assert isinstance(got, dict), f"{call}: expected a dict, got {got!r}"
    ttft, e2e = times[0] - arrival, times[-1] - arrival
    want = {"ttft": ttft, "e2e": e2e, "tpot": (e2e - ttft) / (len(times) - 1) if len(times) > 1 else 0.0}
    for key, value in want.items():
        assert key in got, f"{call}: missing key {key!r}"
        assert_seconds(got[key], value, f"{call}[{key!r}]")
    itl = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert isinstance(got.get("itl"), list) and len(got["itl"]) == len(itl), (
        f"{call}['itl'] should list the {len(itl)} gaps between consecutive tokens, got {got.get('itl')!r}"
    )
    for i, (g, w) in enumerate(zip(got["itl"], itl, strict=True)):
        assert_seconds(g, w, f"{call}['itl'][{i}]")


@grade(request_metrics, "correctness", points=3,
       hint="N tokens have N−1 gaps: what is TPOT divided by? And from when is TTFT measured?")
def test_metrics_worked_example():
    """Arrival 10.0, tokens at 10.5, 10.55, 10.6, 10.7: TTFT 0.5, E2E 0.7, TPOT 0.2/3, ITL [0.05, 0.05, 0.1]."""
    check_metrics(
        request_metrics(10.0, [10.5, 10.55, 10.6, 10.7]),
        10.0,
        [10.5, 10.55, 10.6, 10.7],
        "request_metrics(10.0, [10.5, 10.55, 10.6, 10.7])",
    )
    check_metrics(request_metrics(1.0, [1.25]), 1.0, [1.25], "request_metrics(1.0, [1.25])")


@grade(request_metrics, "correctness", points=2, hint="E2E = TTFT + (N − 1)·TPOT must hold for every request.")
@given(arrival=st.floats(0, 1e4), wait=st.floats(0, 10), gaps=st.lists(st.floats(0, 1), max_size=50))
def test_metrics_any_trace(arrival, wait, gaps):
    times = [arrival + wait]
    for g in gaps:
        times.append(times[-1] + g)
    got = request_metrics(arrival, times)
    check_metrics(got, arrival, times, f"request_metrics({arrival}, <{len(times)} tokens>)")


@grade(request_metrics, "correctness", points=1,
       hint="Raise ValueError naming the argument: no tokens, tokens out of order, a token before arrival.",
       validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((0.0, []), "token_times_s"),
        ((0.0, [0.5, 0.4]), "token_times_s"),
        ((1.0, [0.5]), "token_times_s"),
        ((-1.0, [0.5]), "arrival_s"),
    ],
)
def test_metrics_reject_bad_arguments(args, name):
    assert_rejects(request_metrics, args, name)


# ---- goodput_rps -------------------------------------------------------------------------------

LOG = [
    {"ttft": 0.4, "tpot": 0.030},
    {"ttft": 0.6, "tpot": 0.020},
    {"ttft": 0.2, "tpot": 0.060},
    {"ttft": 0.5, "tpot": 0.050},
    {"ttft": 1.2, "tpot": 0.010},
    {"ttft": 0.1, "tpot": 0.049},
]


@grade(goodput_rps, "correctness", points=3,
       hint="A request counts only if it meets both SLOs; is a request exactly at the limit within it?")
def test_goodput_worked_example():
    """TTFT ≤ 0.5 s and TPOT ≤ 50 ms over a 2 s window: requests 0, 3 (at both limits) and 5 → 1.5 req/s."""
    assert_number(goodput_rps(LOG, 0.5, 0.05, 2.0), 1.5, "goodput_rps(LOG, 0.5, 0.05, 2.0)")
    assert_number(goodput_rps(LOG, 2.0, 1.0, 3.0), 2.0, "goodput_rps(LOG, 2.0, 1.0, 3.0)")
    assert_number(goodput_rps([], 0.5, 0.05, 1.0), 0.0, "goodput_rps([], 0.5, 0.05, 1.0)")


@grade(goodput_rps, "correctness", points=2,
       hint="Goodput is per second of the window, never more than the raw request rate.")
@given(
    reqs=st.lists(st.fixed_dictionaries({"ttft": st.floats(0, 3), "tpot": st.floats(0, 0.2)}), max_size=40),
    ttft=st.floats(0, 3),
    tpot=st.floats(0, 0.2),
    duration=st.floats(0.1, 100),
)
def test_goodput_closed_form(reqs, ttft, tpot, duration):
    want = sum(r["ttft"] <= ttft and r["tpot"] <= tpot for r in reqs) / duration
    got = goodput_rps(reqs, ttft, tpot, duration)
    assert_number(got, want, f"goodput_rps(<{len(reqs)} requests>, {ttft}, {tpot}, {duration})")
    assert got <= len(reqs) / duration + 1e-12, f"goodput {got!r} req/s exceeds the raw rate {len(reqs) / duration!r}"


@grade(goodput_rps, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((LOG, 0.5, 0.05, 0.0), "duration_s"),
        ((LOG, -0.5, 0.05, 1.0), "ttft_slo_s"),
        ((LOG, 0.5, float("nan"), 1.0), "tpot_slo_s"),
    ],
)
def test_goodput_rejects_bad_arguments(args, name):
    assert_rejects(goodput_rps, args, name)


# ---- percentile_nearest_rank -------------------------------------------------------------------


def nearest_rank(values: list[float], q: float) -> float:
    return sorted(values)[math.ceil(Fraction(str(q)) * len(values) / 100) - 1]


@grade(percentile_nearest_rank, "correctness", points=2,
       hint="Nearest rank never interpolates: the answer is always one of the values.")
def test_percentile_worked_example():
    """[15, 20, 35, 40, 50]: P5 → 15, P30 → 20, P40 → 20, P50 → 35, P100 → 50; P99.9 of 1..1000 → 999."""
    data = [50, 15, 40, 20, 35]
    for q, want in [(5, 15), (30, 20), (40, 20), (50, 35), (100, 50)]:
        got = percentile_nearest_rank(data, q)
        assert got == want, f"percentile_nearest_rank({data}, {q}) = {got!r}, expected {want}"
    got = percentile_nearest_rank(list(range(1000, 0, -1)), 99.9)
    assert got == 999, (
        f"percentile_nearest_rank(1..1000, 99.9) = {got!r}, expected 999: rank ceil(999.0) = 999, "
        "but 0.999 × 1000 in floats is 999.0000000000001"
    )


@grade(percentile_nearest_rank, "correctness", points=2,
       hint="Rank ceil(q/100 · N), counted from 1 in the sorted values.")
@given(
    values=st.lists(st.floats(0, 1e3), min_size=1, max_size=60),
    q=st.sampled_from([1, 10, 25, 50, 70, 75, 90, 95, 99, 99.9, 100]),
)
def test_percentile_closed_form(values, q):
    got = percentile_nearest_rank(values, q)
    assert got == nearest_rank(values, q), (
        f"percentile_nearest_rank({values}, {q}) = {got!r}, expected {nearest_rank(values, q)!r}"
    )


@grade(percentile_nearest_rank, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [(([], 50), "values"), (([1.0], 0), "q"), (([1.0], 101), "q")])
def test_percentile_rejects_bad_arguments(args, name):
    assert_rejects(percentile_nearest_rank, args, name)
