"""L11 · Launch latency: CPU launches stitched to GPU work by correlation ID."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from l11_traces import STEP_TRACE, assert_dict, fixture, launch_bound_trace, with_noise

from grader.kit import assert_rejects_all, grade, learner

UNIT = "l11_profiler"
launch_latency = learner(UNIT, "profiler", "launch_latency")
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync")


LATENCY_WHY = {"n": "GPU events joined to a launch by args['correlation']",
               "p50_us": "nearest rank: the ceil(0.5·n)-th smallest gpu.ts − launch.ts",
               "p90_us": "nearest rank: the ceil(0.9·n)-th smallest", "max_us": "the largest latency",
               "unmatched_gpu": "GPU events with no launch of the same correlation"}


@grade(launch_latency, "correctness", points=3,
       hint="The NCCL kernel was launched before the last add but started after it: what joins a launch to its "
            "kernel, if not the order?")
def test_latency_fixture():
    """Latencies 7, 9, 10, 13, 15, 19, 24, 33: p50 is the 4th smallest (13), p90 the 8th (33)."""
    want = {"n": 8, "p50_us": 13, "p90_us": 33, "max_us": 33, "unmatched_gpu": 0}
    assert_dict(launch_latency(fixture()), want, "launch_latency(step_trace.json)", LATENCY_WHY,
                counts=("n", "unmatched_gpu"))
    want = {"n": 24, "p50_us": 5, "p90_us": 5, "max_us": 5, "unmatched_gpu": 0}
    assert_dict(launch_latency(with_noise(launch_bound_trace())), want,
                "launch_latency(24 tiny kernels, each 5 µs after its cudaLaunchKernel, + noise)", LATENCY_WHY,
                counts=("n", "unmatched_gpu"))
    synced = fixture()
    synced["traceEvents"] += [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 2314, "tid": 2314, "ts": 1830, "dur": 9,
         "args": {"cbid": 31, "correlation": 209}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 1832,
         "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 209, "bytes": 4096}}]
    want = {"n": 8, "p50_us": 13, "p90_us": 33, "max_us": 33, "unmatched_gpu": 1}
    assert_dict(launch_latency(synced), want, "launch_latency(step_trace.json + a synchronous cudaMemcpy and its "
                "copy)", LATENCY_WHY, counts=("n", "unmatched_gpu"))
    cpu_only = {"traceEvents": [e for e in STEP_TRACE["traceEvents"] if e.get("pid") != 0]}
    assert_dict(launch_latency(cpu_only), {"n": 0, "p50_us": 0.0, "p90_us": 0.0, "max_us": 0.0, "unmatched_gpu": 0},
                "launch_latency(step_trace.json without its GPU events)", LATENCY_WHY, counts=("n", "unmatched_gpu"))


LAUNCHED = st.tuples(st.integers(0, 500), st.integers(0, 80), st.sampled_from(LAUNCHES), st.sampled_from([5, 6]),
                     st.sampled_from([7, 20]), st.integers(1, 9))


@st.composite
def launch_traces(draw):
    """Launches and their GPU work under random correlation IDs, plus copies no launch event issued.

    Drawn as a flat list of (launch ts, latency, launch name, CPU thread, stream, launch dur), a number of
    unmatched copies and one seed for the IDs and the shuffle, so that a failing case shrinks quickly."""
    base = draw(st.sampled_from([0, 1_727_760_000_000]))
    launched = draw(st.lists(LAUNCHED, max_size=25))
    syncs = draw(st.lists(st.booleans(), max_size=3))  # True: a synchronous cudaMemcpy; False: no runtime event
    rng = random.Random(draw(st.integers(0, 2**16)))
    ids = rng.sample(range(1, 10**6), len(launched) + len(syncs) + 2)
    events = []
    for i, (launch, lat, name, thread, stream, dur) in enumerate(launched):
        cat = {"cudaMemcpyAsync": "gpu_memcpy", "cudaMemsetAsync": "gpu_memset"}.get(name, "kernel")
        events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 5, "tid": thread, "ts": base + launch,
                       "dur": dur, "args": {"correlation": ids[i]}})
        events.append({"ph": "X", "cat": cat, "name": "work", "pid": 0, "tid": stream, "ts": base + launch + lat,
                       "dur": 3, "args": {"correlation": ids[i], "stream": stream}})
    for j, sync in enumerate(syncs, start=len(launched)):
        if sync:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 5, "tid": 5, "ts": base,
                           "dur": 40, "args": {"correlation": ids[j]}})
        events.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0,
                       "tid": 7, "ts": base + 20, "dur": 4, "args": {"correlation": ids[j]}})
    events += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 5, "tid": 5,
                "ts": base + 1, "dur": 50, "args": {"correlation": ids[-2]}},
               {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#2", "pid": 0, "tid": 7,
                "ts": base + 2, "dur": 9, "args": {"correlation": ids[0] if launched else ids[-1]}}]
    rng.shuffle(events)
    return {"traceEvents": events}, [lat for _l, lat, *_ in launched], len(syncs)


def nearest_rank(values: list[int], p: int) -> float:
    return float(sorted(values)[math.ceil(Fraction(p, 100) * len(values)) - 1]) if values else 0.0


@grade(launch_latency, "correctness", points=3,
       hint="Index the launches by correlation; which runtime calls are launches, and which GPU events only look "
            "like work (a gpu_user_annotation)?")
@settings(max_examples=30)
@given(case=launch_traces())
def test_latency_against_the_construction(case):
    trace, latencies, unmatched = case
    want = {"n": len(latencies), "p50_us": nearest_rank(latencies, 50), "p90_us": nearest_rank(latencies, 90),
            "max_us": float(max(latencies, default=0)), "unmatched_gpu": unmatched}
    call = f"launch_latency(trace with latencies {latencies} and {unmatched} GPU events without a launch)"
    assert_dict(launch_latency(trace), want, call, LATENCY_WHY, counts=("n", "unmatched_gpu"), abs_tol=1e-6)


@grade(launch_latency, "correctness", points=1, validation=True,
       hint="Raise ValueError naming trace when it is not a trace dict or a launch has no numeric ts.")
def test_latency_rejects_bad_arguments():
    bad_ts = fixture()
    next(e for e in bad_ts["traceEvents"] if e.get("name") == "cudaLaunchKernel")["ts"] = "1711"
    assert_rejects_all(launch_latency, [((None,), "trace"), (("trace.json",), "trace"),
                                        (({"traceEvents": 3},), "trace"), ((bad_ts,), "trace")])
