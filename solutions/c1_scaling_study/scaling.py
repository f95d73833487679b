"""C1 · Scaling study: the DDP α-β step-time model, a constrained fit to measured step times, scaling efficiency.

Weak scaling keeps the per-rank batch fixed, so in a perfect world every step takes the same time at
any world size P. DDP adds one ring all-reduce of the gradients per step: 2(P−1) messages in a row
(reduce-scatter then all-gather), each paying a latency α, and 2(P−1)/P of the gradient bytes sent per
rank at a bandwidth β. With the all-reduce after the backward (no overlap):

    T(P) = t_compute + 2(P−1)·α + 2(P−1)/P · grad_bytes / β          (P = 1: t_compute)

Timing runs at P = 1, 2, 4 separate the three terms: the P = 1 runs give t_compute, the others fix α
and 1/β by least squares, constrained to be non-negative (a negative latency or bandwidth is not a
physical answer, however well it fits the noise). The fit then predicts the efficiency at sizes you
did not run.

Conventions: seconds, bytes and bytes per second; world sizes and byte counts are exact ints; an
infinite β (no bandwidth cost) is ``math.inf``; invalid arguments raise ValueError naming the argument.
``measure_rank`` (bottom) times a real DDP run on gloo; it is shown in the report, never scored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int


def _check_real(name: str, value: object, *, positive: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a float >= 0 (> 0 when ``positive``), finite unless ``allow_inf``, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if (math.isinf(value) and not allow_inf) or value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}{'' if allow_inf else ' and finite'}, "
                         f"got {value!r}")
    return float(value)


def _terms(world_size: int, grad_bytes: int) -> tuple[float, float]:
    """The two regressors of T(P) − t_compute: the latencies paid in a row and the bytes each rank sends."""
    # TODO: how many messages one rank sends in a row in a ring all-reduce, and what share of the bytes.
    ### BEGIN SOLUTION
    return 2.0 * (world_size - 1), 2.0 * (world_size - 1) / world_size * grad_bytes
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 1. The model
# ---------------------------------------------------------------------------------------------


def ddp_step_seconds(world_size: int, t_compute_s: float, grad_bytes: int, alpha_s: float, bytes_per_s: float
                     ) -> float:
    """One weak-scaling DDP step: t_compute + 2(P−1)·α + 2(P−1)/P·grad_bytes/β (all-reduce after the backward).

    Worked: P = 4, t_compute 40 ms, 6,340,648 B of gradients, α 200 µs, β 1 GB/s → 0.050710972 s
    (40 ms + 1.2 ms + 9.510972 ms). P = 1 → t_compute; β = math.inf → no bandwidth term.
    ValueError naming ``world_size``, ``t_compute_s``, ``grad_bytes``, ``alpha_s`` or ``bytes_per_s``.
    """
    p, g = check_int("world_size", world_size, 1), check_int("grad_bytes", grad_bytes)
    t_c, alpha = _check_real("t_compute_s", t_compute_s), _check_real("alpha_s", alpha_s)
    beta = _check_real("bytes_per_s", bytes_per_s, positive=True, allow_inf=True)
    # TODO: the latency term plus the bandwidth term (both from _terms), added to t_compute.
    ### BEGIN SOLUTION
    latency, volume = _terms(p, g)
    return t_c + latency * alpha + volume / beta
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. The fit
# ---------------------------------------------------------------------------------------------


def _check_timings(world_sizes: object, step_times_s: object) -> tuple[list[int], list[float]]:
    if not isinstance(world_sizes, Sequence) or not isinstance(step_times_s, Sequence):
        raise ValueError("world_sizes and step_times_s must be lists of the same length")
    if len(world_sizes) != len(step_times_s) or not world_sizes:
        raise ValueError(f"world_sizes ({len(world_sizes)}) and step_times_s ({len(step_times_s)}) must have the same, "
                         "non-zero length: one world size per timing")
    sizes = [check_int("world_sizes", p, 1) for p in world_sizes]
    times = []
    for i, t in enumerate(step_times_s):
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t <= 0:
            raise ValueError(f"step_times_s[{i}] must be a finite time > 0 s, got {t!r}")
        times.append(float(t))
    if 1 not in sizes:
        raise ValueError(f"world_sizes needs runs at P = 1 (the compute time), got {sizes}")
    return sizes, times


def fit_ddp_alpha_beta(world_sizes: Sequence[int], step_times_s: Sequence[float], grad_bytes: int
                       ) -> dict[str, float]:
    """Fit t_compute, α and β of :func:`ddp_step_seconds` to measured step times.

    t_compute is the mean of the P = 1 times. Then α ≥ 0 and 1/β ≥ 0 minimise the squared error of
    T(P) − t_compute ≈ α·2(P−1) + (1/β)·2(P−1)/P·grad_bytes over the P > 1 timings (two normal
    equations); if that solution has a negative component, the better of the two one-variable fits
    (each clipped at 0) wins. Returns {"t_compute_s", "alpha_s", "beta_bytes_per_s" (math.inf when 1/β
    = 0), "rmse_s" (over every timing, P = 1 included)}.
    Worked: T = [0.040, 0.046740648, 0.050710972] at P = [1, 2, 4], 6,340,648 B → α 2e-4 s, β 1e9 B/s.
    ValueError naming ``world_sizes`` (no P = 1, fewer than two distinct P > 1, lengths differ),
    ``step_times_s[i]`` (a time <= 0) or ``grad_bytes`` (< 1).
    """
    sizes, times = _check_timings(world_sizes, step_times_s)
    g = check_int("grad_bytes", grad_bytes, 1)
    if len({p for p in sizes if p > 1}) < 2:
        raise ValueError(f"world_sizes needs at least two distinct sizes above 1 to separate α from β, got {sizes}")
    # TODO: t_compute from the P = 1 runs; the 2×2 normal equations for (α, 1/β) on the P > 1 runs;
    #   if a component is negative, compare the two one-variable fits clipped at 0; rmse over all runs.
    ### BEGIN SOLUTION
    base = [t for p, t in zip(sizes, times, strict=True) if p == 1]
    t_c = math.fsum(base) / len(base)
    rows = [(*_terms(p, g), t - t_c) for p, t in zip(sizes, times, strict=True) if p > 1]
    # Scale the byte column to the latency column's size so the 2×2 system is well conditioned.
    scale = max(b for _, b, _ in rows) / max(a for a, _, _ in rows)
    rows = [(a, b / scale, y) for a, b, y in rows]
    saa = math.fsum(a * a for a, _, _ in rows)
    sbb = math.fsum(b * b for _, b, _ in rows)
    sab = math.fsum(a * b for a, b, _ in rows)
    say = math.fsum(a * y for a, _, y in rows)
    sby = math.fsum(b * y for _, b, y in rows)
    det = saa * sbb - sab * sab
    alpha, inv = (sbb * say - sab * sby) / det, (saa * sby - sab * say) / det
    if alpha < 0 or inv < 0:
        only_alpha, only_inv = (max(0.0, say / saa), 0.0), (0.0, max(0.0, sby / sbb))

        def sse(x: tuple[float, float]) -> float:
            return math.fsum((y - x[0] * a - x[1] * b) ** 2 for a, b, y in rows)

        alpha, inv = min(only_alpha, only_inv, key=sse)
    inv /= scale
    beta = math.inf if inv == 0 else 1.0 / inv
    fitted = [t_c + a * alpha + b * inv for a, b in (_terms(p, g) for p in sizes)]
    rmse = math.sqrt(math.fsum((f - t) ** 2 for f, t in zip(fitted, times, strict=True)) / len(times))
    return {"t_compute_s": t_c, "alpha_s": alpha, "beta_bytes_per_s": beta, "rmse_s": rmse}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Efficiency, measured and predicted
# ---------------------------------------------------------------------------------------------


def scaling_efficiency(world_sizes: Sequence[int], step_times_s: Sequence[float]) -> dict[int, float]:
    """Weak-scaling efficiency of each world size above 1: mean T(1) / mean T(P).

    The per-rank batch is fixed, so the ideal step time does not change with P; efficiency 1.0 is
    perfect scaling. Worked: T = [0.040, 0.046740648, 0.050710972] at P = [1, 2, 4] →
    {2: 0.855786, 4: 0.788784}. ValueError naming ``world_sizes`` or ``step_times_s[i]``.
    """
    sizes, times = _check_timings(world_sizes, step_times_s)
    # TODO: the mean time per world size, then T(1) over T(P) for every P > 1 (keys ascending).
    ### BEGIN SOLUTION
    by_size: dict[int, list[float]] = {}
    for p, t in zip(sizes, times, strict=True):
        by_size.setdefault(p, []).append(t)
    mean = {p: math.fsum(ts) / len(ts) for p, ts in by_size.items()}
    return {p: mean[1] / mean[p] for p in sorted(mean) if p > 1}
    ### END SOLUTION


def predicted_efficiency(fit: dict[str, float], world_size: int, grad_bytes: int) -> float:
    """The efficiency the fitted model predicts at ``world_size``: t_compute / ddp_step_seconds(P, ...).

    ``fit`` is :func:`fit_ddp_alpha_beta`'s dict. Worked (t_c 40 ms, α 200 µs, β 1 GB/s, 6,340,648 B):
    P = 8 → 0.742168, 16 → 0.690981, 64 → 0.514912. ValueError naming ``fit`` when a key is missing.
    """
    if not isinstance(fit, dict) or not {"t_compute_s", "alpha_s", "beta_bytes_per_s"} <= set(fit):
        raise ValueError(f"fit must be fit_ddp_alpha_beta's dict (t_compute_s, alpha_s, beta_bytes_per_s), got {fit!r}")
    # TODO: the model's step time at world_size with the fitted numbers, compared with t_compute.
    ### BEGIN SOLUTION
    t_c = fit["t_compute_s"]
    return t_c / ddp_step_seconds(world_size, t_c, grad_bytes, fit["alpha_s"], fit["beta_bytes_per_s"])
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. The measurement (report-only: shown in the report, never scored)
# ---------------------------------------------------------------------------------------------

MLP_SIZES = (512, 1024, 1024, 10)  # 1,585,162 fp32 parameters: 6,340,648 B of gradients per step
BATCH = 64


def measure_rank(rank: int, world: int, steps: int = 20, warmup: int = 5) -> list[float]:
    """Seconds of each timed training step of one rank: an MLP 512-1024-1024-10 (fp32, batch 64 per rank) under
    torch DDP on the default (gloo) process group when ``world`` > 1, the bare model when ``world`` = 1.

    ``warmup`` untimed steps first (DDP builds its buckets on the first ones), then ``steps`` timed ones, each
    a full step: forward, backward (with DDP's all-reduce) and an SGD update, timed with time.perf_counter.
    Every rank must run the same number of steps. Run by ``tests/c1_scaling_study/scaling_study.py`` on
    1, 2 and 4 CPU ranks; its numbers are shown in the report, never graded (shared CPUs are noisy).
    """
    world, steps, warmup = check_int("world", world, 1), check_int("steps", steps, 1), check_int("warmup", warmup)
    rank = check_int("rank", rank)
    if rank >= world:
        raise ValueError(f"rank must be < world = {world}, got {rank}")
    # TODO: build the seeded MLP (wrapped in DistributedDataParallel when world > 1), SGD, this rank's own batch;
    #   run warmup untimed steps, then time each of `steps` full steps (zero_grad, forward, backward, step).
    ### BEGIN SOLUTION
    import time

    import torch
    from torch import nn

    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for n_in, n_out in zip(MLP_SIZES, MLP_SIZES[1:], strict=False):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    model: nn.Module = nn.Sequential(*layers[:-1])
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(BATCH, MLP_SIZES[0], generator=g)
    y = torch.randint(0, MLP_SIZES[-1], (BATCH,), generator=g)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times
    ### END SOLUTION
