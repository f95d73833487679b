"""L11 · Self time per operator, on a fixture, hypothesis-built call trees and a real torch.profiler trace."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from l11_traces import fixture, launch_bound_trace, with_noise

from grader.kit import assert_number, assert_rejects_all, grade, learner

UNIT = "l11_profiler"
self_time_by_op = learner(UNIT, "profiler", "self_time_by_op")
NAN = float("nan")
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def self_oracle(events: list, cat: str) -> tuple[dict[str, float], float]:
    """Self time by the definition, quadratically: each event's parent is the last event before it, in
    (ts, −dur) order on its thread, whose [ts, ts + dur) holds its start. Also Σ dur of the top level."""
    threads: dict[tuple, list] = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == cat:
            threads.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    self_us: dict[str, float] = {}
    top = 0.0
    for thread in threads.values():
        order = sorted(thread, key=lambda e: (e["ts"], -e["dur"]))
        for i, e in enumerate(order):
            self_us[e["name"]] = self_us.get(e["name"], 0.0) + e["dur"]
            parents = [p for p in order[:i] if p["ts"] <= e["ts"] < p["ts"] + p["dur"]]
            if parents:
                self_us[parents[-1]["name"]] -= e["dur"]
            else:
                top += e["dur"]
    return self_us, top


def assert_self_times(got: object, want: dict[str, float], top: float, call: str, *, abs_tol: float = 1e-9) -> None:
    if not isinstance(got, dict) or set(got) != set(want):
        keys = sorted(got) if isinstance(got, dict) else type(got).__name__
        raise AssertionError(f"{call} returned names {keys}, expected {sorted(want)}")
    for name, value in sorted(want.items(), key=lambda kv: -kv[1]):
        assert_number(got[name], value, f"{call}[{name!r}] (dur minus its direct children's dur)",
                      rel=1e-9, abs_tol=abs_tol)
    assert_number(sum(got.values()), top, f"sum of {call}'s values (every µs of a top-level event counted once)",
                  rel=1e-9, abs_tol=abs_tol)


@grade(self_time_by_op, "correctness", points=3,
       hint="aten::item calls _local_scalar_dense, which calls copy_: from item's 20 µs, do you take away 17 or 29?")
def test_self_time_fixture():
    want = {DATALOADER: 700, "aten::addmm": 30, "aten::copy_": 22, "nccl:all_reduce": 20, "aten::linear": 10,
            "aten::clamp_min": 9, "aten::zero_": 6, "aten::add_": 6, "aten::_local_scalar_dense": 5,
            "aten::relu": 3, "aten::item": 3}
    assert_self_times(self_time_by_op(fixture()), want, 814, "self_time_by_op(step_trace.json)")
    assert_self_times(self_time_by_op(with_noise(fixture()), "user_annotation"),
                      {"ProfilerStep#2": 40, "ProfilerStep#3": 1000}, 1040,
                      "self_time_by_op(step_trace.json + noise, 'user_annotation')")
    assert_self_times(self_time_by_op(launch_bound_trace()), {"aten::add": 144}, 144,
                      "self_time_by_op(24 aten::add of 6 µs, one after the other)")


NAMES = ("aten::linear", "aten::addmm", "aten::t", "aten::copy_", "aten::empty", "aten::mul")


@st.composite
def call_forests(draw, start: int, end: int, depth: int, budget: list[int]):
    """Calls inside [start, end): siblings may touch, a child may start with its parent, some last 0 µs."""
    out, t = [], start
    while t < end - 1 and budget[0] > 0 and draw(st.integers(0, 3)):
        budget[0] -= 1
        s = t + draw(st.integers(0, 3))
        if s >= end - 1:
            break
        dur = draw(st.integers(0, end - 1 - s))
        out.append((draw(st.sampled_from(NAMES)), s, dur))
        if depth < 3 and dur > 1:
            out += draw(call_forests(s, s + dur, depth + 1, budget))
        t = s + dur
    return out


@st.composite
def op_traces(draw):
    """Two or three threads (two of them with one tid in two processes) over the same span, shuffled."""
    cat = draw(st.sampled_from(["cpu_op", "user_annotation"]))
    other = "user_annotation" if cat == "cpu_op" else "cpu_op"
    base = draw(st.sampled_from([0, 1_727_760_000_000]))
    events = []
    for pid, tid in draw(st.sampled_from([[(1, 1), (1, 2)], [(1, 1), (2, 1), (1, 3)]])):
        for name, ts, dur in draw(call_forests(0, 200, 0, [12])):
            events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": base + ts, "dur": dur,
                           "args": {"External id": len(events)}})
        events.append({"ph": "X", "cat": other, "name": "## step ##", "pid": pid, "tid": tid, "ts": base, "dur": 200})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
                       "ts": base + 50, "dur": 4, "args": {"correlation": 1}})
    return {"traceEvents": draw(st.permutations(events))}, cat


@grade(self_time_by_op, "correctness", points=3,
       hint="Events of two threads overlap in time without nesting; an event that starts exactly where another "
            "ends is not inside it; a child may start at its parent's start.")
@settings(max_examples=30)
@given(case=op_traces())
def test_self_time_against_the_definition(case):
    trace, cat = case
    want, top = self_oracle(trace["traceEvents"], cat)
    spans = sorted((e["pid"], e["tid"], e["ts"], e["dur"], e["name"]) for e in trace["traceEvents"]
                   if e.get("cat") == cat)
    assert_self_times(self_time_by_op(trace, cat), want, top, f"self_time_by_op(trace of (pid, tid, ts, dur, name) "
                      f"{spans}, {cat!r})", abs_tol=1e-6)


def profile_mlp_steps() -> dict:
    """torch's own profiler on the CPU: a 2-layer MLP, 3 forward + backward steps on the main thread under
    record_function while a second thread runs 2 more; the exported Chrome trace's events."""
    import torch
    from torch import nn
    from torch.autograd.profiler import profile, record_function

    torch.manual_seed(11)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(8, 16)

    def steps(names):
        for name in names:
            with record_function(name):
                model(x).sum().backward()

    config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    with profile(use_kineto=True, experimental_config=config) as prof:
        worker = threading.Thread(target=steps, args=(["worker#0", "worker#1"],))
        worker.start()
        steps(["step#0", "step#1", "step#2"])
        worker.join()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        return json.loads(path.read_text())


@grade(self_time_by_op, "correctness", points=3,
       hint="A real trace: a few hundred aten ops on two threads, fractional microseconds, backward ops nested "
            "in autograd::engine::evaluate_function. Does your nesting hold?")
def test_self_time_real_torch_trace():
    trace = profile_mlp_steps()
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    assert len(ops) > 200 and any(e["name"] == "aten::addmm" for e in ops), (
        f"the profiled MLP gave {len(ops)} cpu_op events: torch's profiler did not record the steps")
    for cat in ("cpu_op", "user_annotation"):
        want, top = self_oracle(trace["traceEvents"], cat)
        assert_self_times(self_time_by_op(trace, cat), want, top,
                          f"self_time_by_op(torch.profiler trace of a 2-layer MLP, {len(ops)} cpu_op events on "
                          f"{len({(e['pid'], e['tid']) for e in ops})} threads, {cat!r})", abs_tol=1e-6)


@grade(self_time_by_op, "correctness", points=1, validation=True,
       hint="Raise ValueError naming trace or cat: a trace dict, a category string, ops with numeric spans.")
def test_self_time_rejects_bad_arguments():
    bad = fixture()
    next(e for e in bad["traceEvents"] if e.get("name") == "aten::relu")["dur"] = NAN
    assert_rejects_all(self_time_by_op, [((None,), "trace"), (({"traceEvents": None},), "trace"), ((bad,), "trace"),
                                         ((fixture(), ""), "cat"), ((fixture(), None), "cat")])
