"""L32 · The two phases of inference: roofline of a step, decode time, and the SLO metrics.

Lecture 32 (06_LLM推理系统与性能工程/32_LLM推理两阶段_Prefill_Decode与核心SLO指标.md).

A forward step runs T tokens through the weights: 2·P·T FLOPs for P·elem_bytes bytes of weights
read once, an arithmetic intensity of 2·T / elem_bytes FLOP/B (P cancels). Prefill runs a whole
prompt at once (T = S, compute-bound: TTFT); decode runs one token per sequence (T = batch,
memory-bound: TPOT). The roofline caps a step at min(peak, intensity × bandwidth): on an H100
(989 TFLOPS, 3.35 TB/s, ridge 295.2) a batch-1 decode reaches 3.35 TFLOPS, 0.34 % of peak.

A memory-bound decode step reads every weight once for the whole batch, plus every sequence's KV
cache: t ≥ (P·weight_bytes + batch·context·kv_bytes_per_token) / bandwidth.

Per-request metrics (vLLM's benchmark definitions): TTFT = first token − arrival (queueing
included); E2E = last token − arrival; TPOT = (E2E − TTFT) / (N_out − 1); ITL = gaps between
consecutive tokens. Goodput = requests meeting both SLOs (TTFT ≤ and TPOT ≤ their limits) per
second of the window (DistServe). Percentiles are nearest-rank: the ceil(q/100·N)-th smallest value.

Conventions: times in seconds (float), bandwidth in bytes/s, FLOPs in FLOP/s; invalid arguments
raise ValueError naming the argument.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

Metrics = dict[str, float | list[float]]


def _check_real(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite float >= 0 (> 0 when ``positive``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# 1. The roofline of one step
# ---------------------------------------------------------------------------------------------


def step_roofline(n_tokens: int, peak_flops: float, mem_bw: float, elem_bytes: int = 2) -> dict[str, object]:
    """Where a step of ``n_tokens`` tokens through the weights sits on the roofline.

    Returns ``{"intensity": 2·T/elem_bytes (FLOP/B), "attainable_flops": min(peak, intensity·bw),
    "peak_fraction": attainable / peak, "bound": "memory" | "compute"}``; "compute" when the
    intensity reaches the ridge peak/bw. H100, T=1: 1.0, 3.35e12, 0.00339, "memory"; T=128: 428.8e12.
    """
    # TODO: validate, then the intensity (FLOPs per weight byte) and the roofline's min.
    ### BEGIN SOLUTION
    t, e = check_int("n_tokens", n_tokens, 1), check_int("elem_bytes", elem_bytes, 1)
    peak, bw = _check_real("peak_flops", peak_flops, positive=True), _check_real("mem_bw", mem_bw, positive=True)
    intensity = 2 * t / e  # 2·P·T FLOPs over P·e bytes of weights
    attainable = min(peak, intensity * bw)
    return {
        "intensity": intensity,
        "attainable_flops": attainable,
        "peak_fraction": attainable / peak,
        "bound": "compute" if intensity >= peak / bw else "memory",
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. A memory-bound decode step
# ---------------------------------------------------------------------------------------------


def decode_step_seconds(
    n_params: int, batch: int, context_len: int, kv_bytes_per_token: int, mem_bw: float, weight_bytes: int = 2
) -> float:
    """Lower bound on one decode step's time (seconds): the bytes it must read over the bandwidth.

    Weights once for the whole batch (P·weight_bytes) plus each sequence's KV cache
    (batch·context_len·kv_bytes_per_token). LLaMA-3-8B on an H100, batch 1, empty cache: 4.794 ms.
    """
    # TODO: validate, then (weight bytes + KV bytes) / bandwidth.
    ### BEGIN SOLUTION
    p, b = check_int("n_params", n_params), check_int("batch", batch)
    ctx, kv = check_int("context_len", context_len), check_int("kv_bytes_per_token", kv_bytes_per_token)
    bw, w = _check_real("mem_bw", mem_bw, positive=True), check_int("weight_bytes", weight_bytes)
    weights = p * w  # read once per step, shared by the whole batch
    cache = b * ctx * kv  # every sequence reads its own K and V
    return (weights + cache) / bw
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Per-request metrics
# ---------------------------------------------------------------------------------------------


def request_metrics(arrival_s: float, token_times_s: Sequence[float]) -> Metrics:
    """TTFT, TPOT, E2E (seconds) and the ITL list of one request from its arrival and token times.

    Returns ``{"ttft": t0 − arrival, "e2e": t_last − arrival, "tpot": (e2e − ttft)/(N − 1) (0.0 when
    N = 1), "itl": [t1 − t0, t2 − t1, ...]}``. Token times must be non-decreasing and not before
    the arrival. Arrival 0, tokens at 0.5, 0.55, 0.6, 0.7 → ttft 0.5, e2e 0.7, tpot 0.0667.
    """
    # TODO: validate (at least one token, times in order), then the four metrics.
    ### BEGIN SOLUTION
    arrival = _check_real("arrival_s", arrival_s)
    if isinstance(token_times_s, str | bytes) or not isinstance(token_times_s, Sequence) or not token_times_s:
        raise ValueError(f"token_times_s must be a non-empty sequence of times, got {token_times_s!r}")
    times = [_check_real("token_times_s", t) for t in token_times_s]
    if times[0] < arrival or any(b < a for a, b in zip(times, times[1:], strict=False)):
        raise ValueError("token_times_s must be non-decreasing and not before arrival_s")
    ttft, e2e = times[0] - arrival, times[-1] - arrival
    n = len(times)
    return {
        "ttft": ttft,
        "e2e": e2e,
        "tpot": (e2e - ttft) / (n - 1) if n > 1 else 0.0,
        "itl": [b - a for a, b in zip(times, times[1:], strict=False)],
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. SLOs: goodput and percentiles
# ---------------------------------------------------------------------------------------------


def goodput_rps(
    requests: Sequence[Mapping[str, float]], ttft_slo_s: float, tpot_slo_s: float, duration_s: float
) -> float:
    """Requests per second that met both SLOs: ttft ≤ ttft_slo_s and tpot ≤ tpot_slo_s.

    ``requests`` are dicts with at least "ttft" and "tpot" (as request_metrics returns them);
    ``duration_s`` is the length of the measurement window.
    """
    # TODO: validate, then count the requests within both limits and divide by the window.
    ### BEGIN SOLUTION
    ttft_slo, tpot_slo = _check_real("ttft_slo_s", ttft_slo_s), _check_real("tpot_slo_s", tpot_slo_s)
    duration = _check_real("duration_s", duration_s, positive=True)
    good = sum(1 for r in requests if r["ttft"] <= ttft_slo and r["tpot"] <= tpot_slo)
    return good / duration
    ### END SOLUTION


def percent_of(q: float, n: int) -> Fraction:
    """q % of n, exactly for a decimal q: 99.9 % of 1000 is 999 (in floats 0.999 × 1000 = 999.0000000000001)."""
    return Fraction(str(q)) * n / 100


def percentile_nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 < q ≤ 100) by nearest rank: the ceil(q/100 · N)-th smallest value.

    Always one of the values (no interpolation). [15, 20, 35, 40, 50]: P30 → 20, P40 → 20, P50 → 35,
    P100 → 50. Mind float rounding: P99.9 of 1000 values is the 999th (see ``percent_of``).
    """
    # TODO: validate (non-empty values, 0 < q <= 100), then sort and pick the nearest rank.
    ### BEGIN SOLUTION
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"values must be a non-empty sequence, got {values!r}")
    q = _check_real("q", q)
    if not 0 < q <= 100:
        raise ValueError(f"q must be in (0, 100], got {q}")
    ordered = sorted(values)
    rank = math.ceil(percent_of(q, len(ordered)))  # 1-based
    return ordered[rank - 1]
    ### END SOLUTION
