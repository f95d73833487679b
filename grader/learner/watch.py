"""``python -m grader watch L [E]`` (``make watch L=23 E=softmax_fused``): regrade on every save.

Polls the modification times of ``exercises/<unit>/`` every half second. When a file changes, it
grades the exercise named (or the unit's exercises that the saved file defines, or the whole unit)
with the per-call time limit on, and redraws one screen: a progress line while grading, then one
line per test, the first failure with its hint and your prints, and how long the verdict took from
the save. Ctrl-C stops watching.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from grader import api
from grader.core import timeout as call_limit
from grader.core.results import GradeReport, Status
from grader.core.target import REPO_ROOT
from grader.i18n import _, pad
from grader.learner import history
from grader.learner.live import ProgressLine
from grader.learner.scoreboard import label, next_exercise

POLL_S = 0.5


def snapshot(folder: Path) -> dict[Path, int]:
    """Modification time (ns) of every file under ``folder`` but backups and hidden files."""
    out = {}
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).parts
        if p.is_file() and not any(part.startswith((".", "__")) for part in rel):
            out[p] = p.stat().st_mtime_ns
    return out


def changed(before: dict[Path, int], after: dict[Path, int]) -> list[Path]:
    """Files added or modified between two snapshots, most recent first."""
    new = [p for p, t in after.items() if before.get(p) != t]
    return sorted(new, key=lambda p: after[p], reverse=True)


def exercises_in(path: Path, exercises: list[str]) -> list[str]:
    """The exercises among ``exercises`` that ``path`` defines (a Python def, or a CUDA function)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return []
    return [e for e in exercises if re.search(rf"(\bdef\s+{re.escape(e)}\s*\(|\b{re.escape(e)}\s*\()", text)]


class Watcher:
    """One unit's folder watched; :meth:`step` grades what the last save changed."""

    def __init__(self, unit: str, exercise: str | None, *, target: Path, call_timeout: float,
                 console: Console, grade: Callable[..., GradeReport] = api.grade) -> None:
        self.unit, self.exercise, self.target = unit, exercise, target
        self.folder = target / unit
        self.call_timeout, self.console, self.grade = call_timeout, console, grade
        self.known = exercise and [exercise] or [str(e) for e in dict.fromkeys(
            t["exercise"] for t in api.manifest([unit]))]
        self.seen = snapshot(self.folder)

    def poll(self) -> list[Path]:
        """The files saved since the last poll (remembering the new state)."""
        now = snapshot(self.folder)
        saved, self.seen = changed(self.seen, now), now
        return saved

    def first(self) -> None:
        """Grade once before any save: what to fix is on the screen from the start."""
        chosen = [self.exercise] if self.exercise else []
        self._grade(chosen, time.time(), _("grading {what} ...").format(what=", ".join(chosen) or _("the whole unit")),
                    lambda took: _("graded at start, in {seconds} s").format(seconds=f"{took:.1f}"))

    def step(self, saved: list[Path]) -> float:
        """Grade after ``saved`` changed; draw the screen; return seconds from the save to the verdict."""
        saved_at = max(p.stat().st_mtime for p in saved if p.exists()) if any(p.exists() for p in saved) \
            else time.time()
        chosen = [self.exercise] if self.exercise else exercises_in(saved[0], self.known) or []
        return self._grade(chosen, saved_at, _("{file} saved; grading {what} ...").format(
            file=saved[0].name, what=", ".join(chosen) or _("the whole unit")), lambda took: _(
            "{file} saved {time}; verdict {seconds} s after the save").format(
            file=saved[0].name, time=time.strftime("%H:%M:%S"), seconds=f"{took:.1f}"))

    def _grade(self, chosen: list[str], since: float, doing: str, done: Callable[[float], str]) -> float:
        self._clear()
        self.console.print(f"[bold]watch[/bold] · {self.unit}: {escape(doing)}")
        line = ProgressLine(force=self.console.is_terminal)
        try:
            report = self.grade(self.target, units=[self.unit], exercises=chosen, call_timeout=self.call_timeout,
                                progress=line)
        except api.GraderError as exc:
            line.clear()
            self.console.print(f"[red]grader error:[/red] {escape(str(exc))}")
            return time.time() - since
        line.clear()
        history.save_quietly(report)
        took = time.time() - since
        self._clear()
        render(report, self.console, header=f"{self.unit} · {done(took)}")
        return took

    def _clear(self) -> None:
        if self.console.is_terminal:
            self.console.clear()


def render(report: GradeReport, console: Console, *, header: str) -> None:
    """One screen: a line per test, then the first problem with its detail, hint and prints."""
    console.print(f"[bold]watch[/bold] · {escape(header)}")
    for r in report.results:
        word, style = label(r.status)
        points = f"{r.score:g}/{r.points:g}" if r.status is not Status.PENDING_GPU else f"–/{r.points:g}"
        console.print(f"  [{style}]{pad(word, 11)}[/{style}] {r.exercise:<24} {r.tier:<11} {points}  {escape(r.name)}")
    score, max_score = report.score, report.max_score
    console.print("  " + _("{points} points").format(points=f"{score:g}/{max_score:g}"))
    first = next_exercise(report.results)
    if first is None:
        console.print("\n  [green]" + _("all graded tests pass") + "[/green]")
        return
    problem = next(r for r in report.results if r.exercise == first.exercise and r.status is first.status)
    console.print(Text.assemble("\n", (f"{problem.exercise} · {problem.name}", "red"), ": ", problem.message))
    for line in problem.detail.splitlines()[:14]:
        console.print(Text(f"  {line}", style="dim"))
    if problem.hint:
        console.print(Text(f"→ {_(problem.hint, unit=problem.unit)}"))
    if problem.output:
        console.print(Text(_("your prints:") + "\n" + "\n".join(problem.output.splitlines()[-10:]), style="italic"))


def watch(unit: str, exercise: str | None, *, target: Path, call_timeout: float, console: Console,
          max_runs: int = 0) -> list[float]:
    """Watch until Ctrl-C (or ``max_runs`` verdicts); returns the seconds from each save to its verdict."""
    w = Watcher(unit, exercise, target=target, call_timeout=call_timeout, console=console)
    w.first()
    console.print(f"\n[bold]watch[/bold] · {display(w.folder)}: " + escape(_(
        "save a file to grade {what} (Ctrl-C to stop)").format(what=exercise or _("what it defines"))))
    latencies: list[float] = []
    while not max_runs or len(latencies) < max_runs:
        time.sleep(POLL_S)
        saved = w.poll()
        if saved:
            latencies.append(w.step(saved))  # a save made while grading shows in the next poll
            console.print("\n" + escape(_("watching {folder} (Ctrl-C to stop)").format(folder=display(w.folder))))
    return latencies


def display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _watch(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        (unit,) = api.resolve_units([args.unit])
        watch(unit, args.exercise, target=Path(args.target), call_timeout=args.timeout, console=console,
              max_runs=args.max_runs)
    except api.GraderError as exc:
        console.print(f"[red]watch:[/red] {escape(str(exc))}")
        return 2
    except ValueError:
        console.print("[red]watch:[/red] " + escape(_("{unit} names several units: name one").format(
            unit=repr(args.unit))))
        return 2
    except KeyboardInterrupt:
        console.print("\n" + _("stopped watching"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser("watch", help="regrade the exercise you are editing on every save (Ctrl-C stops)")
    w.add_argument("unit", metavar="UNIT", help="23, L23 or l23_online_softmax")
    w.add_argument("exercise", nargs="?", metavar="EXERCISE",
                   help="only this exercise (default: the exercises the saved file defines)")
    w.add_argument("--target", default=str(REPO_ROOT / "exercises"), help="folder to watch (default exercises/)")
    w.add_argument("--timeout", type=float, default=call_limit.DEFAULT_S, metavar="S",
                   help=f"limit on one call of your code (default {call_limit.DEFAULT_S:g} s)")
    w.add_argument("--max-runs", type=int, default=0, help=argparse.SUPPRESS)  # tests: stop after N verdicts
    w.set_defaults(func=_watch)
