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
    raise NotImplementedError("TODO: validate, then the intensity (FLOPs per weight byte) and the roofline's min.")


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
    raise NotImplementedError('TODO: validate, then (weight bytes + KV bytes) / bandwidth.')


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
    raise NotImplementedError('TODO: validate (at least one token, times in order), then the four metrics.')


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
    raise NotImplementedError('TODO: validate, then count the requests within both limits and divide by the window.')


def percent_of(q: float, n: int) -> Fraction:
    """q % of n, exactly for a decimal q: 99.9 % of 1000 is 999 (in floats 0.999 × 1000 = 999.0000000000001)."""
    return Fraction(str(q)) * n / 100


def percentile_nearest_rank(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0 < q ≤ 100) by nearest rank: the ceil(q/100 · N)-th smallest value.

    Always one of the values (no interpolation). [15, 20, 35, 40, 50]: P30 → 20, P40 → 20, P50 → 35,
    P100 → 50. Mind float rounding: P99.9 of 1000 values is the 999th (see ``percent_of``).
    """
    # TODO: validate (non-empty values, 0 < q <= 100), then sort and pick the nearest rank.
    raise NotImplementedError('TODO: validate (non-empty values, 0 < q <= 100), then sort and pick the nearest rank.')
