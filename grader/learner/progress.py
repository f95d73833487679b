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

from grader import api, i18n
from grader.core.results import GradeReport, Status, TestResult, totals
from grader.core.target import REPO_ROOT
from grader.i18n import N_, _
from grader.learner import history
from grader.learner.scoreboard import label, next_exercise

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
            return N_("not graded yet")
        if self.exercises_done == self.exercises:
            return N_("done")
        return N_("started") if self.score else N_("to do")


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
    when = _("last graded {time}").format(time=updated) if updated else _("nothing graded yet")
    console.print(_("[bold]Dripstone[/bold] · your progress ({when}; `make grade` updates it)").format(when=when))
    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("#", _("unit"), _("points"), _("exercises done"), _("status"), _("lecture")):
        table.add_column(col, no_wrap=col != _("lecture"), overflow="fold")
    style = {"done": "green", "started": "yellow", "to do": "red", "not graded yet": "dim"}
    for n, row in enumerate(rows, 1):
        points = f"{row.score:g}/{row.max_score:g}" if row.graded else "–"
        done = f"{row.exercises_done}/{row.exercises}" if row.graded else "–"
        table.add_row(str(n), row.unit, points, done, f"[{style[row.status]}]{_(row.status)}[/]",
                      row.lecture or _("(see the unit's README)"))
    console.print(table)
    graded = [r for r in rows if r.graded]
    console.print("  " + _("{done} of {units} units done; {points} points in the units graded").format(
        done=sum(r.status == "done" for r in rows), units=len(rows),
        points=f"{sum(r.score for r in graded):g}/{sum(r.max_score for r in graded):g}"))
    _next(rows, report, console)


def _next(rows: list[UnitProgress], report: GradeReport, console: Console) -> None:
    order = {r.unit: i for i, r in enumerate(rows)}
    ordered = sorted(report.results, key=lambda r: order.get(r.unit, len(order)))
    nxt = next_exercise(ordered)
    first_new = next((r for r in rows if not r.graded), None)
    if nxt is not None and (first_new is None or order[nxt.unit] < order[first_new.unit]):
        short = nxt.unit.split("_")[0]
        console.print("\n  " + _("next:") + f" [bold]{nxt.unit} · {nxt.exercise}[/bold] "
                      f"({label(nxt.status)[0]}): {escape(nxt.message)}")
        console.print(f"        make grade L={short} E={nxt.exercise}   ·   make hint L={short} "
                      f"E={nxt.exercise}   ·   " + _("lecture:") + " "
                      + (lecture_link(nxt.unit) or _("see the README")))
    elif first_new is not None:
        readme = i18n.localized(REPO_ROOT / "exercises" / first_new.unit / "README.md").name
        console.print("\n  " + _("next:") + f" [bold]{first_new.unit}[/bold] " + _(
            "(not graded yet): read exercises/{unit}/{readme}, then make grade L={short}").format(
            unit=first_new.unit, readme=readme, short=first_new.unit.split("_")[0]))
    else:
        console.print("\n  " + _("every unit is done: well played"))


def _progress(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 140)
    report, updated = history.load(args.target)
    render(course_progress(report, api.all_units()), report, updated, console)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("progress", help="units done, points per unit, the course order, what to do next")
    p.add_argument("--target", default="exercises", help="the graded folder (default exercises)")
    p.set_defaults(func=_progress)
