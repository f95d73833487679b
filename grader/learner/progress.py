"""``python -m grader progress``: the course at a glance, from the results ``make grade`` saved.

Units in the course's order (the suggested order: each lecture builds on the ones before), the points
of each, how many of its exercises are done, the lecture to read, and the one exercise to work on
next. Nothing is graded again: run ``make grade`` (all units, or ``L=``) to update what it shows.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grader import api
from grader.grading.results import GradeReport, Status, TestResult, totals
from grader.grading.scoreboard import next_exercise
from grader.grading.target import REPO_ROOT
from grader.learner import history

COURSE_URL = "https://github.com/lilinji/ai-infra-odyssey"
_LINK = re.compile(r"\]\((" + re.escape(COURSE_URL) + r"/[^)\s]+)\)")


@dataclass(frozen=True)
class UnitProgress:
    unit: str
    score: float
    max_score: float
    exercises_done: int
    exercises: int
    graded: bool
    lecture: str  # the URL of the lecture's text ("" if the README has none)

    @property
    def status(self) -> str:
        if not self.graded:
            return "not graded yet"
        if self.exercises_done == self.exercises:
            return "done"
        return "started" if self.score else "to do"


def lecture_link(unit: str, root: Path = REPO_ROOT) -> str:
    """The course text of ``unit``'s lecture, as its README links it (exercises/, else solutions/)."""
    for folder in ("exercises", "solutions"):
        readme = root / folder / unit / "README.md"
        if readme.is_file():
            m = _LINK.search(readme.read_text())
            if m:
                return m.group(1)
    return ""


def lecture_title(url: str) -> str:
    """``23_经典算子优化_Reduce与Softmax_OnlineSoftmax_Fused`` from the lecture's URL."""
    return Path(unquote(url)).stem if url else ""


def exercise_done(results: list[TestResult]) -> bool:
    """Every graded (not pending-GPU) test of the exercise at full marks."""
    graded = [r for r in results if r.status is not Status.PENDING_GPU]
    return bool(graded) and all(r.score >= r.points for r in graded)


def course_progress(report: GradeReport, units: list[str], root: Path = REPO_ROOT) -> list[UnitProgress]:
    """One row per unit of ``units`` (course order) from the saved results in ``report``."""
    by_unit = report.by_unit()
    rows = []
    for unit in units:
        results = by_unit.get(unit, [])
        by_exercise: dict[str, list[TestResult]] = {}
        for r in results:
            by_exercise.setdefault(r.exercise, []).append(r)
        score, max_score = totals(results)
        rows.append(UnitProgress(unit, score, max_score, sum(exercise_done(rs) for rs in by_exercise.values()),
                                 len(by_exercise), bool(results), lecture_link(unit, root)))
    return rows


def render(rows: list[UnitProgress], report: GradeReport, updated: str, console: Console) -> None:
    """The table, the total, and what to do next."""
    console.print(f"[bold]Dripstone[/bold] · your progress "
                  f"({'last graded ' + updated if updated else 'nothing graded yet'}; `make grade` updates it)")
    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("#", "unit", "points", "exercises done", "status", "lecture"):
        table.add_column(col, no_wrap=col != "lecture", overflow="fold")
    style = {"done": "green", "started": "yellow", "to do": "red", "not graded yet": "dim"}
    for n, row in enumerate(rows, 1):
        points = f"{row.score:g}/{row.max_score:g}" if row.graded else "–"
        done = f"{row.exercises_done}/{row.exercises}" if row.graded else "–"
        table.add_row(str(n), row.unit, points, done, f"[{style[row.status]}]{row.status}[/]",
                      row.lecture or "(see the unit's README)")
    console.print(table)
    graded = [r for r in rows if r.graded]
    console.print(f"  {sum(r.status == 'done' for r in rows)} of {len(rows)} units done; "
                  f"{sum(r.score for r in graded):g}/{sum(r.max_score for r in graded):g} points in the units graded")
    _next(rows, report, console)


def _next(rows: list[UnitProgress], report: GradeReport, console: Console) -> None:
    order = {r.unit: i for i, r in enumerate(rows)}
    ordered = sorted(report.results, key=lambda r: order.get(r.unit, len(order)))
    nxt = next_exercise(ordered)
    first_new = next((r for r in rows if not r.graded), None)
    if nxt is not None and (first_new is None or order[nxt.unit] < order[first_new.unit]):
        short = nxt.unit.split("_")[0]
        console.print(f"\n  next: [bold]{nxt.unit} · {nxt.exercise}[/bold] ({nxt.status.value.upper()}): "
                      f"{escape(nxt.message)}")
        console.print(f"        make grade L={short} E={nxt.exercise}   ·   make hint L={short} "
                      f"E={nxt.exercise}   ·   lecture: {lecture_link(nxt.unit) or 'see the README'}")
    elif first_new is not None:
        console.print(f"\n  next: [bold]{first_new.unit}[/bold] (not graded yet): read exercises/{first_new.unit}/"
                      f"README.md, then make grade L={first_new.unit.split('_')[0]}")
    else:
        console.print("\n  every unit is done: well played")


def _progress(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 140)
    report, updated = history.load(args.target)
    render(course_progress(report, api.all_units()), report, updated, console)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("progress", help="units done, points per unit, the course order, what to do next")
    p.add_argument("--target", default="exercises", help="the graded folder (default exercises)")
    p.set_defaults(func=_progress)
