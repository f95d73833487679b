"""The progress line while grading: ``grading l23_online_softmax · softmax_fused  12/40 tests``, redrawn in
place on a terminal (stderr), silent elsewhere (logs and pipes get the scoreboard only)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from grader.api import Progress


class ProgressLine:
    """A callable for ``grader.api.grade(progress=...)``; :meth:`clear` before printing the scoreboard."""

    def __init__(self, stream: TextIO | None = None, *, force: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.on = force or self.stream.isatty()
        self.started = time.monotonic()
        self.shown = False

    def __call__(self, p: Progress) -> None:
        if not self.on:
            return
        self.stream.write("\r\x1b[K" + line(p, time.monotonic() - self.started))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def line(p: Progress, elapsed_s: float) -> str:
    """One line: where grading is, how far, how long it has run."""
    where = f"{p.last.unit} · {p.last.exercise}" if p.last else "collecting the tests"
    total = f"/{p.total}" if p.total else ""
    return f"grading {where}  {p.done}{total} tests  {elapsed_s:.0f} s"
