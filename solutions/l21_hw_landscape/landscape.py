"""L21 · The hardware landscape in a few ratios: ridge points, peak FLOPs, the decode floor, mixed-speed DP.

A spec sheet reduces to a handful of numbers that decide what runs fast where:

* the ridge point, peak FLOP/s over HBM bytes/s: kernels below it are memory-bound on that chip
  (and bandwidth has grown faster than FLOPs since Hopper, so B200's ridge is *lower* than H100's);
* peak FLOP/s = compute units × FLOPs per cycle per unit × clock (a multiply-add is 2 FLOPs);
* batch-1 decode reads every weight once per token: it can never beat weight bytes / HBM bandwidth;
* synchronous data parallelism runs at the speed of its slowest rank: chips of different speed in one
  job leave the fast ones waiting, unless the batch is split by throughput.

Conventions: bytes and counts are exact ints (``check_int``), times in seconds unless the name says
``_ms``. Invalid arguments raise ValueError naming the argument or the entry (``compute_ms[2]``,
``table['H100'][1]``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from grader.constants import GPUS, TB, TFLOPS

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# Spec rows (dense FP16/BF16 Tensor Core TFLOPS, HBM TB/s). grader.constants holds A100, H100, B200.
V100_SXM2 = (125.0, 0.9)  # NVIDIA V100 datasheet (SXM2): 125 TFLOPS Tensor, 900 GB/s HBM2
RUBIN_COURSE = (5000.0, 22.0)  # the lecture's §1.6 figures for Vera Rubin: announced, not measured
DATASHEET_TABLE: dict[str, tuple[float, float]] = {
    "V100": V100_SXM2,
    **{
        name: (GPUS[key].bf16_flops / TFLOPS, GPUS[key].hbm_bytes_per_s / TB)
        for name, key in (("A100", "A100-80G"), ("H100", "H100-SXM"), ("B200", "B200"))
    },
}

# Per-SM dense FP16 Tensor Core throughput and the clock behind the datasheet peaks
A100_FLOPS_PER_CYCLE_PER_SM = 2048  # A100 whitepaper: 1024 dense FP16 FMA per clock per SM
A100_CLOCK_HZ = 1.41e9  # A100 whitepaper: boost clock used for the 312 TFLOPS peak
H100_FLOPS_PER_CYCLE_PER_SM = 4096  # H100 whitepaper: 4 Tensor Cores × 512 dense FP16 FMA per clock
H100_CLOCK_HZ = 1.83e9  # H100 whitepaper: boost clock behind 989.4 TFLOPS (SXM5, 132 SMs)


def _check_real(name: str, value: object, *, positive: bool = True) -> float:
    """A finite real number (not a bool), > 0 (or >= 0), else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def _check_reals(name: str, values: object) -> list[float]:
    """A non-empty sequence of finite numbers > 0: ``name`` if not, ``name[i]`` for one bad entry."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    return [_check_real(f"{name}[{i}]", v) for i, v in enumerate(values)]


# ---------------------------------------------------------------------------------------------
# 1. Spec-sheet ratios
# ---------------------------------------------------------------------------------------------


def _check_table(table: object) -> dict[str, tuple[float, float]]:
    if not isinstance(table, Mapping) or not table:
        raise ValueError(f"table must be a non-empty mapping name -> (dense_tflops, hbm_tb_per_s), got {table!r}")
    rows = {}
    for name, row in table.items():
        where = f"table[{name!r}]"
        if isinstance(row, str | bytes) or not isinstance(row, Sequence) or len(row) != 2:
            raise ValueError(f"{where} must be a pair (dense_tflops, hbm_tb_per_s), got {row!r}")
        rows[name] = (_check_real(f"{where}[0]", row[0]), _check_real(f"{where}[1]", row[1]))
    return rows


def ridge_points(table: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """The ridge point of each chip: dense peak FLOP/s divided by HBM bytes/s, in FLOPs per byte.

    ``table`` maps a name to ``(dense_peak_tflops, hbm_tb_per_s)``; TFLOP/s over TB/s needs no unit
    change (both 10¹²). A kernel whose arithmetic intensity is below the ridge is memory-bound there.

    Worked examples: V100 (125, 0.9) → 138.8889; A100 (312, 2.0) → 156.0 (the lecture's table),
    (312, 2.039) → 153.0162 (the 80 GB SXM datasheet); H100 (989, 3.35) → 295.2239; B200 (2250, 8.0) →
    281.25, lower than H100's: bandwidth grew faster than FLOPs.

    Returns ``{name: ridge}`` with the same names. Errors: ``table`` empty or not a mapping;
    ``table['name']`` not a pair; ``table['name'][0]`` or ``[1]`` not a finite number > 0.
    """
    rows = _check_table(table)
    # TODO: peak over bandwidth for each row.
    ### BEGIN SOLUTION
    return {name: peak / bw for name, (peak, bw) in rows.items()}
    ### END SOLUTION


def peak_flops(units: int, flops_per_cycle: int, clock_hz: float) -> float:
    """Peak FLOP/s = compute units × FLOPs per cycle per unit × clock (Hz). A multiply-add counts 2.

    Worked examples: H100 SXM5, 132 SMs × 4096 dense FP16 FLOPs/cycle × 1.83 GHz →
    989,429,760,000,000 (989.4 TFLOP/s). With the A100's per-SM rate of 2048 the same chip would give
    494,714,880,000,000, half its datasheet; the A100 itself, 108 × 2048 × 1.41 GHz →
    311,869,440,000,000 (312 T). An NPU of 32 cores with a 16×16×16 Cube (4096 MACs = 8192 FLOPs per
    cycle) at 1.8 GHz → 471,859,200,000,000.

    Errors: ``units`` or ``flops_per_cycle`` not an int >= 1; ``clock_hz`` not a finite number > 0.
    """
    n = check_int("units", units, 1)
    per_cycle = check_int("flops_per_cycle", flops_per_cycle, 1)
    clock = _check_real("clock_hz", clock_hz)
    # TODO: multiply the three.
    ### BEGIN SOLUTION
    return float(n * per_cycle * clock)
    ### END SOLUTION


def decode_floor_s(weight_bytes: int, hbm_bytes_per_s: float, n_gpus: int = 1) -> float:
    """Lower bound on one batch-1 decode step: every weight byte is read once per token.

    seconds = weight_bytes / n_gpus / hbm_bytes_per_s (the weights split evenly over ``n_gpus`` that
    read in parallel, as with tensor parallelism).

    Worked examples: 70B parameters in fp16, 140,000,000,000 B, on one H100 (3.35e12 B/s) →
    0.04179104 s (at most ~24 tokens/s whatever the FLOPs); over 8 GPUs → 0.00522388 s.

    Errors: ``weight_bytes`` not an int >= 0; ``hbm_bytes_per_s`` not a finite number > 0;
    ``n_gpus`` not an int >= 1.
    """
    w = check_int("weight_bytes", weight_bytes)
    bw = _check_real("hbm_bytes_per_s", hbm_bytes_per_s)
    n = check_int("n_gpus", n_gpus, 1)
    # TODO: the bytes each GPU must read, over its bandwidth.
    ### BEGIN SOLUTION
    return w / n / bw
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Synchronous data parallelism on chips of different speed
# ---------------------------------------------------------------------------------------------


def hetero_dp_step(compute_ms: Sequence[float]) -> dict[str, object]:
    """One synchronous data-parallel step when rank i computes for ``compute_ms[i]`` ms.

    Every rank waits at the gradient all-reduce for the slowest: the step takes the maximum.
    Returns ``{"iteration_ms": max, "wait_ms": [max − t_i], "efficiency": [t_i / max],
    "mean_efficiency": Σt / (n · max)}`` (lists in rank order, floats).

    Worked example (the lecture's incident: 42 ms GPGPU ranks beside 71 ms NPU ranks):
    ``hetero_dp_step([42, 71])`` → iteration 71.0, wait [29.0, 0.0], efficiency [0.5915493, 1.0],
    mean 0.7957746: the fast chips idle 29 ms of every 71.

    Errors: ``compute_ms`` empty or not a sequence; ``compute_ms[i]`` not a finite number > 0.
    """
    times = _check_reals("compute_ms", compute_ms)
    # TODO: the slowest rank sets the step; each rank's wait and busy share follow.
    ### BEGIN SOLUTION
    slowest = max(times)
    return {
        "iteration_ms": slowest,
        "wait_ms": [slowest - t for t in times],
        "efficiency": [t / slowest for t in times],
        "mean_efficiency": sum(times) / (len(times) * slowest),
    }
    ### END SOLUTION


def balance_batch(global_batch: int, throughputs: Sequence[float]) -> list[int]:
    """Split ``global_batch`` samples over ranks in proportion to their throughputs (samples per unit time).

    Largest-remainder (Hamilton) apportionment, computed exactly: quota q_i = B · th_i / Σ th with each
    throughput taken as the decimal it is written as (``Fraction(str(th_i))``); every rank gets
    floor(q_i), then the samples left go one each to the largest fractional parts, ties to the lower
    index. The parts always sum to B and each is within 1 of its quota.

    Worked examples: ``balance_batch(1024, [71, 42])`` = [643, 381] (ranks taking 42 and 71 ms per 512
    samples, so throughputs in the ratio 71 : 42; the step becomes 52.75 vs 52.83 ms instead of 42 vs
    71); ``balance_batch(1024, [1/42, 1/71])`` = [643, 381]; ``(10, [1, 1, 1])`` = [4, 3, 3];
    ``(7, [3, 2, 2])`` = [3, 2, 2].

    Errors: ``global_batch`` not an int >= 0; ``throughputs`` empty or not a sequence;
    ``throughputs[i]`` not a finite number > 0.
    """
    b = check_int("global_batch", global_batch)
    exact = [Fraction(str(th)) for th in _check_reals("throughputs", throughputs)]
    # TODO: exact quotas, their floors, then hand out what is left by largest remainder.
    ### BEGIN SOLUTION
    total = sum(exact)
    quotas = [b * th / total for th in exact]
    parts = [math.floor(q) for q in quotas]
    left = b - sum(parts)
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - parts[i]), i))
    for i in order[:left]:
        parts[i] += 1
    return parts
    ### END SOLUTION
