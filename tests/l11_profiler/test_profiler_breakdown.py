"""L11 · GPU busy and idle time of a step from a Kineto trace: the union of GPU intervals."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from l11_traces import STEP_TRACE, assert_dict, fixture, launch_bound_trace, with_noise

from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "l11_profiler"
gpu_time_breakdown = learner(UNIT, "profiler", "gpu_time_breakdown")


BREAKDOWN_WHY = {
    "window_us": "the step's user_annotation span, or first GPU start to last GPU end",
    "busy_us": "the union of kernel, memcpy and memset intervals clipped to the window, all streams together",
    "idle_us": "window − busy", "idle_pct": "100 · idle / window",
    "compute_us": "the union of the non-NCCL kernels", "nccl_us": "the union of kernels with 'nccl' in their name",
    "memcpy_us": "the union of gpu_memcpy events", "memset_us": "the union of gpu_memset events",
}


@grade(gpu_time_breakdown, "correctness", points=3,
       hint="The NCCL kernel overlaps the add on another stream, a kernel of the previous step spills in, and "
            "a gpu_user_annotation covers the whole stretch: which of these is work, and how much of it is in "
            "the step?")
def test_breakdown_step_window():
    want = {"window_us": 1000, "busy_us": 101, "idle_us": 899, "idle_pct": 89.9, "compute_us": 82, "nccl_us": 5,
            "memcpy_us": 15, "memset_us": 2}
    assert_dict(gpu_time_breakdown(fixture(), "ProfilerStep#3"), want,
                "gpu_time_breakdown(step_trace.json, 'ProfilerStep#3')", BREAKDOWN_WHY)


@grade(gpu_time_breakdown, "correctness", points=2,
       hint="Without a step, where does the window start and end, and is any interval cut at its edges?")
def test_breakdown_whole_trace():
    want = {"window_us": 1055, "busy_us": 156, "idle_us": 899, "idle_pct": 100 * 899 / 1055, "compute_us": 102,
            "nccl_us": 40, "memcpy_us": 15, "memset_us": 2}
    assert_dict(gpu_time_breakdown(fixture()), want, "gpu_time_breakdown(step_trace.json)", BREAKDOWN_WHY)
    assert_number(gpu_time_breakdown(fixture())["idle_pct"], 85.2133, "gpu_time_breakdown(step_trace.json)"
                  "['idle_pct'] (899 idle µs of 1055)", rel=1e-5)


@grade(gpu_time_breakdown, "correctness", points=2,
       hint="Which events are GPU work: look at ph as well as cat, and skip whatever else a trace holds.")
def test_breakdown_launch_bound_and_noise():
    want = {"window_us": 200, "busy_us": 48, "idle_us": 152, "idle_pct": 76.0, "compute_us": 48, "nccl_us": 0,
            "memcpy_us": 0, "memset_us": 0}
    assert_dict(gpu_time_breakdown(launch_bound_trace(), "ProfilerStep#12"), want,
                "gpu_time_breakdown(24 tiny kernels, 'ProfilerStep#12')", BREAKDOWN_WHY)
    want = {"window_us": 1000, "busy_us": 101, "idle_us": 899, "idle_pct": 89.9, "compute_us": 82, "nccl_us": 5,
            "memcpy_us": 15, "memset_us": 2}
    assert_dict(gpu_time_breakdown(with_noise(fixture()), "ProfilerStep#3"), want,
                "gpu_time_breakdown(step_trace.json + instants, metadata, a python_function without dur, a 'B' "
                "kernel mark, 'ProfilerStep#3')", BREAKDOWN_WHY)


KERNELS = ("ampere_sgemm_128x64_tn", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
           "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "ncclKernel_AllGather_RING_LL_Sum_int8_t", "void at::native::vectorized_elementwise_kernel<4>")
COPIES = ("Memcpy HtoD (Pinned -> Device)", "Memcpy DtoH (Device -> Pageable)", "Memcpy DtoD (Device -> Device)")


GPU_WORK = st.tuples(st.sampled_from(["kernel", "kernel", "gpu_memcpy", "gpu_memset"]), st.integers(0, 4),
                     st.integers(0, 240), st.integers(0, 60), st.integers(0, 1), st.sampled_from([7, 20, 24]))


@st.composite
def gpu_traces(draw):
    """GPU work on two devices and three streams, decoy annotations and CPU events, shuffled, at Kineto timestamps.

    Drawn as a flat list of (cat, name index, start, dur, device, stream) and one shuffle seed, so that a failing
    case shrinks quickly to a few intervals."""
    base = draw(st.sampled_from([0, 1_727_760_000_000]))
    drawn = draw(st.lists(GPU_WORK, max_size=10))
    names = {"kernel": KERNELS, "gpu_memcpy": COPIES, "gpu_memset": ("Memset (Device)",)}
    work = [(cat, names[cat][k % len(names[cat])], start, dur, dev, stream)
            for cat, k, start, dur, dev, stream in drawn]
    step = draw(st.tuples(st.integers(0, 200), st.integers(1, 120)) if not work else
                st.none() | st.tuples(st.integers(0, 200), st.integers(1, 120)))
    events = [{"ph": "X", "cat": cat, "name": name, "pid": dev, "tid": stream, "ts": base + start, "dur": dur,
               "args": {"device": dev, "stream": stream, "correlation": i}}
              for i, (cat, name, start, dur, dev, stream) in enumerate(work)]
    events += [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, "tid": 9, "ts": base, "dur": 300},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#5", "pid": 0, "tid": 7, "ts": base + 40,
         "dur": 150},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 9, "ts": base + 3, "dur": 250},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": base + 4, "dur": 5,
         "args": {"correlation": 0}},
    ]
    if step is not None:
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 9, "tid": 9,
                       "ts": base + step[0], "dur": step[1]})
    random.Random(draw(st.integers(0, 2**16))).shuffle(events)
    return {"traceEvents": events}, work, step, base


def breakdown_oracle(work, step) -> dict[str, float]:
    """Counts covered microseconds on a grid (integer timestamps): no interval arithmetic to get wrong."""
    lo, hi = (step[0], step[0] + step[1]) if step else (min(w[2] for w in work), max(w[2] + w[3] for w in work))
    cells: dict[str, set[int]] = {"compute_us": set(), "nccl_us": set(), "memcpy_us": set(), "memset_us": set()}
    for cat, name, start, dur, _dev, _stream in work:
        key = {"gpu_memcpy": "memcpy_us", "gpu_memset": "memset_us"}.get(cat) or (
            "nccl_us" if "nccl" in name.lower() else "compute_us")
        cells[key] |= set(range(max(start, lo), min(start + dur, hi)))
    busy, window = len(set().union(*cells.values())), hi - lo
    return {"window_us": window, "busy_us": busy, "idle_us": window - busy,
            "idle_pct": 100 * (window - busy) / window if window else 0.0, **{k: len(v) for k, v in cells.items()}}


@grade(gpu_time_breakdown, "correctness", points=3,
       hint="Two streams busy at the same microsecond count once; an interval that starts before the window "
            "counts only from the window's start.")
@settings(max_examples=30)
@given(case=gpu_traces())
def test_breakdown_against_a_grid(case):
    trace, work, step, base = case
    name = "ProfilerStep#5" if step else None
    call = (f"gpu_time_breakdown(trace of {len(work)} GPU events {[(w[0], w[2], w[3], w[5]) for w in work]} "
            f"(+{base} µs), {name!r})" + (f" with the step at {step[0]}..{step[0] + step[1]}" if step else ""))
    assert_dict(gpu_time_breakdown(trace, name), breakdown_oracle(work, step), call, BREAKDOWN_WHY, abs_tol=1e-6)


@grade(gpu_time_breakdown, "correctness", points=1, validation=True,
       hint="Raise ValueError naming trace or step: is it a trace dict, is the step a user_annotation in it, "
            "does every kernel have a numeric span?")
def test_breakdown_rejects_bad_arguments():
    no_dur, text_dur, negative = fixture(), fixture(), fixture()
    kernels = [e for e in no_dur["traceEvents"] if e.get("cat") == "kernel"]
    del kernels[0]["dur"]
    next(e for e in text_dur["traceEvents"] if e.get("cat") == "gpu_memcpy")["dur"] = "12"
    next(e for e in negative["traceEvents"] if e.get("cat") == "gpu_memset")["dur"] = -2
    cpu_only = {"traceEvents": [e for e in STEP_TRACE["traceEvents"] if e.get("pid") != 0]}
    assert_rejects_all(gpu_time_breakdown, [
        ((None,), "trace"), (([],), "trace"), (({"events": []},), "trace"), (({"traceEvents": {}},), "trace"),
        ((no_dur, "ProfilerStep#3"), "trace"), ((text_dur,), "trace"), ((negative,), "trace"),
        ((cpu_only,), "trace"),
        ((fixture(), "ProfilerStep#9"), "step"), ((fixture(), 3), "step"),
        (({"traceEvents": [e for e in STEP_TRACE["traceEvents"] if e.get("cat") != "user_annotation"]},
          "ProfilerStep#3"), "step"),
    ])
