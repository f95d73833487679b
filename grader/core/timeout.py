"""A time limit on each call of learner code in ``make grade``: an endless loop fails its test, not the run.

``python -m grader grade --timeout S`` (default :data:`DEFAULT_S`, 0 = off) passes ``--dripstone-timeout S``
to the grading child, whose plugin calls :func:`configure`; the harness runs each learner call
(``LearnerFunction.__call__``) under :func:`limit`:

* After S seconds SIGALRM raises :class:`CallTimeout` in the main thread. It derives from BaseException,
  not Exception, on purpose: hypothesis must not shrink or replay it (every replay would cost S seconds
  more), and neither a test's ``pytest.raises(ValueError)`` nor a learner's ``except Exception`` may
  swallow it. The test fails with the message; the next test runs as usual. This stops whatever runs
  Python bytecode: loops, the Triton interpreter, a sleep.
* A signal cannot interrupt a call into compiled code that never returns to the interpreter (a CUDA
  kernel that never ends, waited for in a synchronize; a C extension's loop), nor learner code that
  catches BaseException. A watchdog thread sees such a call still running a grace period later (S/3,
  between 2 s and :data:`GRACE_S`) and calls the stuck handler: the plugin records the test as failed
  and ends the process with :data:`EXIT_STUCK`; ``grader.api.grade`` then grades the tests not reached
  yet in a new process.
* Compiled code that holds the GIL stops the watchdog thread too: only Ctrl-C ends it (``make grade``
  still prints the scoreboard of what was graded).

Not armed in batch grading's judge: there each call runs in a forked worker with its own wall-clock
limit (:mod:`grader.instrument.worker`). Nested calls run under the outermost limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from grader.core import child

# The slowest learner call grading every unit's solutions/ on the CPU took 4.6 s (L23 block_sum under numba's
# CUDA simulator; L24 sgemm_tiled 3.8 s, L23 softmax_online 3.7 s; 2 cores at load average 13): 30 s leaves
# a 6x margin for a slower laptop, a first Triton compile on a GPU.
DEFAULT_S = 30.0
GRACE_S = 10.0  # at most, after the alarm: how long a call may take to notice it before the watchdog acts
EXIT_STUCK = 75  # the grading child's exit status when the watchdog ended it

OPTION = "--dripstone-timeout"  # the plugin's pytest option
HELP = "fail a test whose learner call runs longer than this many seconds (default 0: no limit)"

_limit_s = 0.0
_armed = False
_hung: dict[str, float] = {}  # learner functions that ran past the limit in this grading run → that limit

HUNG_OPTION = "--dripstone-hung"  # the plugin's option: a function that ran past the limit in an earlier child
HUNG_HELP = "a learner function that already ran past the time limit: its calls fail at once (repeatable)"


class CallTimeout(BaseException):  # not Exception: see the module docstring
    """A learner call ran past the time limit."""


def configure(seconds: float, on_stuck: Callable[[str], None] | None = None, hung: Sequence[str] = ()) -> None:
    """Set the per-call limit (0 = off), what to do when a call cannot be interrupted (gets the message), and the
    functions that already ran past it (in an earlier grading child)."""
    global _limit_s
    if seconds < 0:
        raise ValueError(f"a call time limit must be >= 0 seconds (0 = off), got {seconds}")
    _limit_s = float(seconds)
    _watchdog.on_stuck = on_stuck or exit_stuck
    _hung.clear()
    _hung.update(dict.fromkeys(hung, _limit_s))


def hung_name(text: str) -> str | None:
    """The function a time-out message names (its first words), or None for another message."""
    name, sep, _ = text.partition(" did not return within ")
    return name if sep and name and " " not in name else None


def limit_s() -> float:
    return _limit_s


def message(name: str, seconds: float, *, earlier: bool = False) -> str:
    """Two lines: what happened, then what to look for."""
    what = ("in an earlier test: it is not called again (one time limit per function, not one per test)"
            if earlier else "an endless loop? It was stopped")
    return (f"{name} did not return within {seconds:g} s: {what}.\n"
            "Look for a loop whose condition never changes or an index that never advances. If your code is only "
            f"slow, grade with a longer limit: make grade ARGS=\"--timeout {4 * seconds:g}\" (0: no limit)")


@contextlib.contextmanager
def limit(name: str) -> Iterator[None]:
    """Run the block under the configured limit, raising :class:`CallTimeout` when it runs past it."""
    global _armed
    seconds = _limit_s
    if seconds <= 0 or _armed or not hasattr(signal, "SIGALRM") or threading.current_thread() is not \
            threading.main_thread():
        yield
        return
    if name in _hung:  # each further call would cost the whole limit again, for the same verdict
        raise CallTimeout(message(name, _hung[name] or seconds, earlier=True))

    def on_alarm(signum: int, frame: object) -> None:
        _hung[name] = seconds
        raise CallTimeout(message(name, seconds))

    previous = signal.signal(signal.SIGALRM, on_alarm)
    _armed = True
    _watchdog.arm(time.monotonic() + seconds + min(GRACE_S, max(2.0, seconds / 3)),
                  f"{name} did not return within {seconds:g} s and could not be interrupted (compiled code that "
                  "never returns, a CUDA kernel or a C extension call? a bare `except:` around the loop?), so the "
                  "grader stopped it.\n"
                  + message(name, seconds).split("\n", 1)[1])
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _watchdog.disarm()
        _armed = False


PARENT_ENV = "DRIPSTONE_PARENT_PID"  # set by grader.api for its grading child


def die_with_parent() -> None:
    """In a grading child: SIGKILL when the process that started it ends, however it ends (nbgrader stopped, kill -9),
    so a learner's endless loop never outlives the grader. Armed at the child's start (the plugin), not in a
    ``preexec_fn`` (unsafe beside the parent's threads), and only in the process grader.api started (the variable
    is removed, so nothing this child starts inherits it). Linux only: :func:`grader.core.child.die_with_parent`."""
    parent = os.environ.pop(PARENT_ENV, "")
    if parent.isdigit():
        child.die_with_parent(int(parent), EXIT_STUCK)


def exit_stuck(text: str) -> None:
    sys.stderr.write(f"\ngrader: {text}\n")
    sys.stderr.flush()
    os._exit(EXIT_STUCK)


class _Watchdog:
    """One daemon thread that calls ``on_stuck`` when an armed deadline passes before :meth:`disarm`."""

    def __init__(self) -> None:
        self.on_stuck: Callable[[str], None] = exit_stuck
        self._cv = threading.Condition()
        self._deadline: float | None = None
        self._text = ""
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, text: str) -> None:
        with self._cv:
            self._deadline, self._text = deadline, text
            if self._thread is None or not self._thread.is_alive():  # a fork leaves the thread behind
                self._thread = threading.Thread(target=self._run, name="dripstone-call-watchdog", daemon=True)
                self._thread.start()
            self._cv.notify()

    def disarm(self) -> None:
        with self._cv:
            self._deadline = None

    def _run(self) -> None:
        with self._cv:
            while True:
                if self._deadline is None:
                    self._cv.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                text, self._deadline = self._text, None
                break
        self.on_stuck(text)


_watchdog = _Watchdog()
