"""grader/core/timeout.py: a learner call past the limit fails its test; one it cannot interrupt is reported."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.core import timeout


@pytest.fixture
def limit_s():
    """Set a limit for one test; off again afterwards (the grading child sets it from --dripstone-timeout)."""
    stuck: list[str] = []

    def _set(seconds: float) -> list[str]:
        timeout.configure(seconds, on_stuck=stuck.append)
        return stuck

    yield _set
    timeout.configure(0)


def endless() -> None:
    while True:
        pass


def test_an_endless_loop_is_stopped_with_a_message_that_says_what_to_do(limit_s):
    limit_s(0.3)
    start = time.monotonic()
    with pytest.raises(timeout.CallTimeout) as caught, timeout.limit("softmax_fused"):
        endless()
    assert time.monotonic() - start < 2
    first, rest = str(caught.value).split("\n")
    assert first == "softmax_fused did not return within 0.3 s: an endless loop? It was stopped."
    assert 'make grade ARGS="--timeout 1.2"' in rest


def test_the_limit_is_lifted_after_the_call_and_when_off(limit_s):
    limit_s(0.3)
    with timeout.limit("quick"):
        pass
    time.sleep(0.5)  # no alarm left armed
    limit_s(0)
    with timeout.limit("slow"):
        time.sleep(0.4)


def test_nested_calls_run_under_the_outer_limit(limit_s):
    limit_s(0.3)
    with pytest.raises(timeout.CallTimeout, match="^outer did not return"), timeout.limit("outer"):
        with timeout.limit("inner"):
            pass
        endless()


def test_neither_hypothesis_nor_except_exception_swallows_it(limit_s):
    """A BaseException: hypothesis does not replay or shrink it (each replay would cost the limit again)."""
    limit_s(0.3)
    calls = []

    @given(st.integers())
    def check(n):
        calls.append(n)
        try:
            with timeout.limit("f"):
                endless()
        except Exception:  # a learner's or a test's `except Exception` must not hide the timeout
            pass

    with pytest.raises(timeout.CallTimeout):
        check()
    assert len(calls) == 1, f"the example ran {len(calls)} times: replayed or shrunk after the limit"


def test_a_call_that_cannot_be_interrupted_goes_to_the_stuck_handler(limit_s):
    """Learner code that catches BaseException stands for compiled code a signal cannot stop."""
    stuck = limit_s(0.2)
    with timeout.limit("hides_it"):
        deadline = time.monotonic() + 10
        while not stuck and time.monotonic() < deadline:
            with contextlib.suppress(BaseException):  # swallows the timeout: the point of the test
                time.sleep(0.05)
    assert len(stuck) == 1 and stuck[0].startswith("hides_it did not return within 0.2 s and could not be interrupted")


def test_not_armed_outside_the_main_thread(limit_s):
    limit_s(0.1)
    done = []

    def run():
        with timeout.limit("in_a_thread"):
            time.sleep(0.3)
        done.append(True)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert done == [True]


def test_a_negative_limit_is_refused():
    with pytest.raises(ValueError, match=">= 0 seconds"):
        timeout.configure(-1)


def test_a_function_that_ran_past_the_limit_is_not_waited_for_again(limit_s):
    """One hang costs one limit per function (7 tests of a looping function cost 7 × 30 s in make grade)."""
    limit_s(0.3)
    with pytest.raises(timeout.CallTimeout), timeout.limit("loops"):
        endless()
    start = time.monotonic()
    with pytest.raises(timeout.CallTimeout) as caught, timeout.limit("loops"):
        endless()
    assert time.monotonic() - start < 0.1, "the second call must fail at once"
    assert str(caught.value).startswith("loops did not return within 0.3 s: in an earlier test: it is not called")
    with timeout.limit("other"):  # other functions keep their own limit
        time.sleep(0.01)
    timeout.configure(0.3, hung=["from_an_earlier_child"])  # a watchdog-ended child's function, passed on
    with pytest.raises(timeout.CallTimeout, match="in an earlier test"), timeout.limit("from_an_earlier_child"):
        pass
    assert timeout.hung_name(str(caught.value)) == "loops" and timeout.hung_name("f(2) = 5, expected 4") is None


def test_a_grading_child_whose_parent_ended_before_it_armed_ends_at_once():
    """The parent killed while its grading child still starts (a loaded machine: torch takes seconds to import):
    the child finds it has another parent by then and ends instead of grading on as an orphan."""
    import os
    import subprocess
    import sys

    from grader.core.target import REPO_ROOT

    code = ("import os\nos.environ['DRIPSTONE_PARENT_PID'] = str(os.getppid() + 1_000_000)\n"
            "from grader.core import timeout\ntimeout.die_with_parent()\nprint('still grading')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.returncode == timeout.EXIT_STUCK and "still grading" not in done.stdout, (done.returncode, done.stdout)
