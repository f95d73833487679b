"""L11's shared test data: the Kineto trace fixtures and the dict check of the breakdown and latency tests
(imported by the test files beside it; not a test file itself)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from grader.kit import assert_exact, assert_number

FIXTURES = Path(__file__).parent / "fixtures"
STEP_TRACE = json.loads((FIXTURES / "step_trace.json").read_text())
LAUNCH_BOUND = json.loads((FIXTURES / "launch_bound_trace.json").read_text())
NOISE = json.loads((FIXTURES / "noise_events.json").read_text())


def fixture() -> dict:
    """step_trace.json: a 1000 µs ProfilerStep#3 (the lecture's DataLoader-starved step, in small)."""
    return copy.deepcopy(STEP_TRACE)


def launch_bound_trace() -> dict:
    """launch_bound_trace.json (lecture §2.2, pathology 4): a 200 µs decode step of 24 aten::add of 6 µs, each
    launching a 2 µs kernel that starts 5 µs after its cudaLaunchKernel: the GPU idles 6 µs between kernels."""
    return copy.deepcopy(LAUNCH_BOUND)


def with_noise(trace: dict) -> dict:
    """noise_events.json: events no function here reads, some malformed (an instant, metadata without ts, a
    python_function with dur None, a 'B' mark of cat kernel, a flow end): skipped, neither trusted nor refused."""
    trace["traceEvents"] += copy.deepcopy(NOISE)
    return trace


def assert_dict(got: object, want: dict, call: str, why: dict[str, str], *, counts: tuple[str, ...] = (),
                rel: float = 1e-9, abs_tol: float = 1e-9) -> None:
    """Same keys; counts exact ints, times within rel/abs_tol; each message says why the value is what it is."""
    if not isinstance(got, dict) or set(got) != set(want):
        keys = sorted(got) if isinstance(got, dict) else type(got).__name__
        raise AssertionError(f"{call} returned keys {keys}, expected a dict with keys {sorted(want)}: {want}")
    for key, value in want.items():
        what = f"{call}[{key!r}] ({why.get(key, '')})"
        if key in counts:
            assert_exact(got[key], value, what, why=why.get(key, ""))
        else:
            assert_number(got[key], value, what, rel=rel, abs_tol=abs_tol)


# ---- gpu_time_breakdown ------------------------------------------------------------------------
