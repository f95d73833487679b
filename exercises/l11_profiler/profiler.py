"""L11 · Reading a profile before optimizing: Amdahl's bound and a Kineto trace, by hand.

Lecture 11 (01_性能工程与系统前置/11_PyTorch_Profiler实战_手把手带你做一次性能体检.md).

Amdahl. Speeding one part of a step up changes only that part: a 40 ms attention made 15 ms
saves 25 ms of an 850 ms step (3 %), and even deleting it entirely could not buy more than
850 / 810 = 1.049×. Measure which part is large before you touch anything.

The trace. ``torch.profiler`` (Kineto) exports a Chrome trace: ``{"traceEvents": [...]}``, one
JSON object per event. The events this module reads are complete events (``"ph": "X"``) with a
start ``ts`` and a duration ``dur``, both in microseconds:

* ``cat == "cpu_op"``: an ATen operator on a CPU thread (``pid``, ``tid``); operators nest, so an
  operator's ``dur`` includes the operators it calls;
* ``cat == "user_annotation"``: a ``record_function`` range, such as ``ProfilerStep#3``;
* ``cat == "cuda_runtime"``: a CUDA runtime call on a CPU thread (``cudaLaunchKernel``,
  ``cudaMemcpyAsync``, ``cudaStreamSynchronize``...), with ``args["correlation"]``;
* ``cat`` in ``kernel``, ``gpu_memcpy``, ``gpu_memset``: work a GPU stream did (``pid`` the
  device, ``tid`` the stream), with the ``args["correlation"]`` of the runtime call that issued it;
* ``cat == "gpu_user_annotation"``: a ``record_function`` range drawn on the GPU track; it spans
  the work inside it and is not work itself.

Metadata (``"ph": "M"``), instants (``"i"``), flow arrows (``"s"``/``"f"``, cat ``ac2g``) and any
other category are skipped by every function here. Invalid arguments raise ValueError naming the
argument; a trace whose selected events lack a numeric ``ts`` or ``dur`` is refused (``trace``).
"""

from __future__ import annotations

import math

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_NAMES = frozenset({"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaMemcpyAsync",
                          "cudaMemsetAsync"})
BREAKDOWN_KEYS = ("window_us", "busy_us", "idle_us", "idle_pct", "compute_us", "nccl_us", "memcpy_us", "memset_us")
LATENCY_KEYS = ("n", "p50_us", "p90_us", "max_us", "unmatched_gpu")


# ---------------------------------------------------------------------------------------------
# Argument checks (given)
# ---------------------------------------------------------------------------------------------


def _check_real(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a finite real >= 0 (> 0 when ``positive``), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a real number of seconds, got {value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be finite and {'> 0' if positive else '>= 0'}, got {value!r}")
    return float(value)


def trace_events(trace: object) -> list:
    """The ``traceEvents`` list of a Chrome trace, or ValueError naming ``trace``."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        got = f"a dict with keys {sorted(trace)[:6]}" if isinstance(trace, dict) else type(trace).__name__
        raise ValueError(f"trace must be a Chrome trace dict with a 'traceEvents' list (json.load of the "
                         f"exported file), got {got}")
    return trace["traceEvents"]


def complete_events(trace: object, cats: tuple[str, ...] | frozenset[str]) -> list[dict]:
    """The ``"ph": "X"`` events of ``trace`` whose ``cat`` is in ``cats``, each with a usable span.

    An event of those categories whose ``ts`` or ``dur`` is missing, not a number, not finite, or a
    negative duration is refused: ValueError naming ``trace`` and the event's index.
    """
    selected = []
    for i, event in enumerate(trace_events(trace)):
        if not isinstance(event, dict) or event.get("ph") != "X" or event.get("cat") not in cats:
            continue
        ts, dur = event.get("ts"), event.get("dur")
        for key, value in (("ts", ts), ("dur", dur)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"trace event {i} ({event.get('cat')} {event.get('name')!r}) has {key}={value!r}: "
                                 f"a complete event needs a finite number of microseconds")
        if dur < 0:
            raise ValueError(f"trace event {i} ({event.get('cat')} {event.get('name')!r}) has a negative dur {dur!r}")
        selected.append(event)
    return selected


def correlation(event: dict) -> object:
    """``args["correlation"]`` of an event, or None when it has none."""
    args = event.get("args")
    return args.get("correlation") if isinstance(args, dict) else None


# ---------------------------------------------------------------------------------------------
# 1. Amdahl: what a local speedup buys the whole step
# ---------------------------------------------------------------------------------------------


def amdahl(total_s: float, part_s: float, part_new_s: float) -> dict[str, float]:
    """The whole step after one part of it goes from ``part_s`` to ``part_new_s`` seconds.

    Returns ``new_total_s`` = total − part + part_new; ``speedup`` = total / new_total (inf if the
    new total is 0); ``time_saved_fraction`` = 1 − new_total / total; ``max_speedup`` = total /
    (total − part), the speedup if the part took no time at all (inf when the part is the whole).

    Lecture §0.2: ``amdahl(0.850, 0.040, 0.015)`` → new 0.825 s, speedup 1.030303, saved 0.029412
    (under 3 %), max 1.049383, although the part itself ran 2.67× faster.

    Errors: ``total_s`` not a finite real > 0, ``part_s`` or ``part_new_s`` not a finite real >= 0,
    or ``part_s`` > ``total_s`` → ValueError naming the argument.
    """
    total = _check_real("total_s", total_s, positive=True)
    part = _check_real("part_s", part_s)
    new_part = _check_real("part_new_s", part_new_s)
    if part > total:
        raise ValueError(f"part_s must be <= total_s: the part is inside the step, got part_s={part_s!r} > "
                         f"total_s={total_s!r}")
    # TODO: the new total, the step's speedup and the fraction of time saved, and the best speedup
    # any optimization of this part could ever give.
    raise NotImplementedError("TODO: the new total, the step's speedup and the fraction of time saved, and the best speedup any optimization of this part could ever give.")


# ---------------------------------------------------------------------------------------------
# 2. Is the GPU busy? The union of GPU intervals in the step window
# ---------------------------------------------------------------------------------------------


def gpu_time_breakdown(trace: dict, step: str | None = None) -> dict[str, float]:
    """Busy and idle GPU time of a step, from a Kineto Chrome trace, in microseconds.

    The window is the ``user_annotation`` event named ``step`` (e.g. ``"ProfilerStep#3"``): [ts,
    ts + dur). Without ``step`` it runs from the first GPU event's start to the last one's end.
    GPU work is every ``"ph": "X"`` event of cat ``kernel``, ``gpu_memcpy`` or ``gpu_memset`` on any
    device and stream, each interval clipped to the window; ``gpu_user_annotation`` ranges are not
    work. Two streams may run at once, so time is a *union* of intervals, never a sum of durations.

    Keys ``BREAKDOWN_KEYS``: ``window_us``; ``busy_us`` (the union of all work); ``idle_us`` =
    window − busy; ``idle_pct`` = 100·idle / window (0.0 for an empty window); and the union of each
    class's own intervals: ``compute_us`` (kernels whose lower-cased name has no "nccl"),
    ``nccl_us`` (kernels whose name has), ``memcpy_us``, ``memset_us``. Classes on different streams
    may overlap each other, so their sum can exceed ``busy_us``.

    Lecture §0.2's picture at small scale (tests/l11_profiler/fixtures/step_trace.json): a 1000 µs
    step in which the DataLoader holds the CPU for 700 µs → window 1000, busy 101, idle 899,
    idle_pct 89.9, compute 82, nccl 5, memcpy 15, memset 2; without ``step``: window 1055, busy 156.

    Errors: ``trace`` not a Chrome trace dict (or a GPU event without a numeric span) → ValueError
    naming trace; ``step`` not a str or None, or no user_annotation of that name → ValueError naming
    step; no GPU event and no ``step`` → ValueError naming trace.
    """
    work = complete_events(trace, GPU_CATS)
    if step is not None and not isinstance(step, str):
        raise ValueError(f"step must be the name of a user_annotation (a str) or None, got {step!r}")
    if step is not None:
        marks = [e for e in complete_events(trace, ("user_annotation",)) if e.get("name") == step]
        if not marks:
            raise ValueError(f"step {step!r} is not the name of any user_annotation event in the trace "
                             "(names look like 'ProfilerStep#3')")
        lo = min(e["ts"] for e in marks)
        hi = lo + next(e["dur"] for e in marks if e["ts"] == lo)
    elif not work:
        raise ValueError("trace has no GPU events (cat kernel, gpu_memcpy, gpu_memset): pass step= to measure "
                         "a window, or profile with ProfilerActivity.CUDA")
    else:
        lo = min(e["ts"] for e in work)
        hi = max(e["ts"] + e["dur"] for e in work)
    # TODO: clip each GPU interval to [lo, hi), sort it into its class, and measure the union of the
    # intervals (all of them for busy_us, each class's own for the per-class keys).
    raise NotImplementedError("TODO: clip each GPU interval to [lo, hi), sort it into its class, and measure the union of the intervals (all of them for busy_us, each class's own for the per-class keys).")


# ---------------------------------------------------------------------------------------------
# 3. Launch latency: stitching CPU launches to GPU work by correlation ID
# ---------------------------------------------------------------------------------------------


def launch_latency(trace: dict) -> dict[str, float]:
    """How long GPU work waited between its launch on the CPU and its start on the GPU, in µs.

    Launches are the ``cuda_runtime`` events named in ``LAUNCH_NAMES`` (cudaLaunchKernel,
    cudaLaunchKernelExC, cuLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync). Each GPU event (cat
    kernel, gpu_memcpy, gpu_memset) is joined to the launch with the same ``args["correlation"]``;
    its latency is gpu.ts − launch.ts. A GPU event with no such launch counts in ``unmatched_gpu``
    (a synchronous ``cudaMemcpy`` is not a launch). Joining by time order instead is wrong as soon
    as two streams run: work launched first can start last.

    Keys ``LATENCY_KEYS``: ``n`` matched GPU events (int), ``p50_us``, ``p90_us`` and ``max_us`` of
    their latencies, by nearest rank: the p-th percentile is the ⌈p/100·n⌉-th smallest (0.0 when
    n = 0), and ``unmatched_gpu`` (int).

    tests/l11_profiler/fixtures/step_trace.json: latencies 7, 9, 10, 13, 15, 19, 24, 33 (the NCCL
    kernel, launched before the last add, starts 33 µs after its launch) → n 8, p50 13 (the 4th),
    p90 33 (the 8th), max 33, unmatched 0.

    Errors: ``trace`` not a Chrome trace dict, or a selected event without a numeric span →
    ValueError naming trace.
    """
    launches = [e for e in complete_events(trace, ("cuda_runtime",)) if e.get("name") in LAUNCH_NAMES]
    work = complete_events(trace, GPU_CATS)
    # TODO: index the launches by correlation ID, join each GPU event to its launch, then count the
    # matches and take nearest-rank percentiles of the latencies.
    raise NotImplementedError('TODO: index the launches by correlation ID, join each GPU event to its launch, then count the matches and take nearest-rank percentiles of the latencies.')


# ---------------------------------------------------------------------------------------------
# 4. Self time: what each operator spent outside the operators it called
# ---------------------------------------------------------------------------------------------


def self_time_by_op(trace: dict, cat: str = "cpu_op") -> dict[str, float]:
    """Exclusive (self) time per event name, in µs, for the ``"ph": "X"`` events of category ``cat``.

    Per thread (``pid``, ``tid``), sort the events by (ts, −dur): a parent comes before the children
    that start with it. The parent of an event is the innermost event still open at its start, the
    latest in that order whose half-open span [ts, ts + dur) contains the event's ``ts`` (an event
    that starts exactly where another ends is its sibling). An event's self time is its ``dur``
    minus the ``dur`` of its direct children (not of their children); self times are summed per
    name. Their sum over all names equals the sum of the durations of the top-level events.

    tests/l11_profiler/fixtures/step_trace.json: DataLoader 700, aten::addmm 30, aten::copy_ 22
    (12 inside aten::_local_scalar_dense + 10 on its own), nccl:all_reduce 20, aten::linear 10,
    aten::clamp_min 9, aten::zero_ 6, aten::add_ 6 (3 + 3), aten::_local_scalar_dense 5,
    aten::relu 3, aten::item 3.

    Errors: ``trace`` not a Chrome trace dict, or an event of ``cat`` without a numeric span →
    ValueError naming trace; ``cat`` not a non-empty str → ValueError naming cat.
    """
    if not isinstance(cat, str) or not cat:
        raise ValueError(f"cat must be an event category such as 'cpu_op' (a non-empty str), got {cat!r}")
    events = complete_events(trace, (cat,))
    # TODO: per (pid, tid), walk the events in (ts, -dur) order with a stack of the open ones; charge
    # each event's dur to itself and take it off its parent's self time, then sum per name.
    raise NotImplementedError("TODO: per (pid, tid), walk the events in (ts, -dur) order with a stack of the open ones; charge each event's dur to itself and take it off its parent's self time, then sum per name.")
