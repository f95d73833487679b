"""The terminal scoreboard: one row per unit, exercise and tier, with the first failure and a hint; last, the
one exercise to work on next."""

from __future__ import annotations

import functools
import re
import sys

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from grader.core.results import GradeReport, Status, TestResult, Tier, totals
from grader.core.target import REPO_ROOT
from grader.i18n import N_, _

PRINTS_SHOWN = 8  # lines of a failing test's prints under its row (all of them: python -m grader run)

STYLE = {
    Status.PASSED: (N_("PASS"), "green"),
    Status.FAILED: (N_("FAIL"), "red"),
    Status.TODO: (N_("TODO"), "yellow"),
    Status.PENDING_GPU: (N_("pending GPU"), "cyan"),
    Status.ERROR: (N_("ERROR"), "magenta"),
}


def label(status: Status) -> tuple[str, str]:
    """(the status's word in the learner's language, its colour)."""
    word, style = STYLE[status]
    return _(word), style
# The row shows the most telling status of its tests.
RAN = (Status.PASSED, Status.FAILED)  # the statuses of a test whose kernels did run
PRECEDENCE = [Status.ERROR, Status.FAILED, Status.TODO, Status.PENDING_GPU, Status.PASSED]


def _gated(r: TestResult) -> bool:
    """A test that passed but is not scored while its exercise's values are wrong (grading/failures.py)."""
    return "gated_by" in r.record


def _row_status(results: list[TestResult]) -> Status:
    """The most telling status of the row's own verdicts: a gated test says only that another test failed, so
    a stub's row reads TODO, not FAIL, when its bad-argument checks (provided by the stub) pass but are gated."""
    own = [r for r in results if not _gated(r)] or results
    present = {r.status for r in own}
    return next(s for s in PRECEDENCE if s in present)


def _first_problem(results: list[TestResult]) -> TestResult | None:
    own = [r for r in results if not _gated(r)] or results
    return next((r for r in own if r.status is not Status.PASSED), None)


def _points(score: float, max_score: float) -> str:
    return f"{score:g}/{max_score:g}"


@functools.cache
def _readme(unit: str) -> str:
    for folder in ("exercises", "solutions"):
        path = REPO_ROOT / folder / unit / "README.md"
        if path.is_file():
            return path.read_text(errors="replace")
    return ""


@functools.cache
def readme_position(unit: str, exercise: str) -> int:
    """Where the unit's README first names ``exercise`` as code (`` `name` `` or `` `name(``); after every named
    one if it names it nowhere. The course order a learner reads, which the scoreboard and ``next:`` follow."""
    m = re.search(rf"`{re.escape(exercise)}[`(]", _readme(unit))
    return m.start() if m else sys.maxsize


def _rows(results: list[TestResult]) -> dict[tuple[str, Tier], list[TestResult]]:
    """Tests grouped by exercise (in the order the unit's README names them, then the order tests first meet
    them), tiers in the grading order."""
    first = {r.exercise: (readme_position(r.unit, r.exercise), i) for i, r in reversed(list(enumerate(results)))}
    tiers = list(Tier)
    out: dict[tuple[str, Tier], list[TestResult]] = {}
    for r in sorted(results, key=lambda r: (first[r.exercise], tiers.index(r.tier))):
        out.setdefault((r.exercise, r.tier), []).append(r)
    return out


def _unit_table(unit: str, results: list[TestResult], verbose: bool) -> Table:
    score, max_score = totals(results)
    table = Table(title=f"{unit}  {_points(score, max_score)}", title_justify="left", box=box.SIMPLE_HEAD,
                  expand=True, title_style="bold")
    for col, kw in [(_("exercise"), {"no_wrap": True}), (_("tier"), {"no_wrap": True}),
                    (_("points"), {"justify": "right", "no_wrap": True}), (_("status"), {"no_wrap": True}),
                    (_("first failure · hint"), {"ratio": 1, "overflow": "fold"})]:
        table.add_column(col, **kw)
    for (exercise, tier), rs in _rows(results).items():
        status = _row_status(rs)
        word, style = label(status)
        problem = _first_problem(rs)
        detail = Text()
        if problem is not None and problem.status is not Status.PENDING_GPU:
            detail.append(problem.message)
            if problem.hint and problem.status is Status.FAILED:
                detail.append(f"\n→ {_(problem.hint, unit=problem.unit)}", style="dim")
            if problem.output:
                detail.append("\n" + _("your prints:") + "\n"
                              + "\n".join(problem.output.splitlines()[-PRINTS_SHOWN:]), style="dim italic")
        ran_on = ", ".join(dict.fromkeys(r.executor for r in rs if r.executor and r.status in RAN))
        if ran_on:  # which executor ran the .cu kernels (a GPU, or the CPU executor where none is lent)
            detail.append(("\n" if detail else "") + _("ran on: {executor}").format(executor=ran_on), style="dim")
        s, m = totals(rs)
        points = _points(s, m) if status is not Status.PENDING_GPU else f"–/{sum(r.points for r in rs):g}"
        table.add_row(exercise, str(tier), points, Text(word, style=style), detail)
        if verbose:
            for r in rs:
                table.add_row("", "", _points(r.score, r.max_score), label(r.status)[0],
                              Text(f"{r.name}: {r.message}", style="dim"))
    return table


def render(report: GradeReport, console: Console, *, verbose: bool = False) -> None:
    """Print the scoreboard of a report: a table per unit, then totals and what to do next."""
    console.print(_("[bold]Dripstone[/bold] · grading {target}").format(target=escape(report.target)))
    for unit, results in report.by_unit().items():
        console.print(_unit_table(unit, results, verbose))
    _footer(report, console)


def _footer(report: GradeReport, console: Console) -> None:
    failed = [r for r in report.results if r.status is Status.FAILED and r.detail]
    for r in failed[:3]:
        console.print(f"\n[red]{r.unit} · {r.exercise} · {escape(r.name)}[/red]: {escape(r.message)}")
        console.print(Text(r.detail.strip("\n")[:1500], style="dim"))
    console.print()
    for unit, results in report.by_unit().items():
        score, max_score = totals(results)
        console.print("  " + _("{unit}: {points} points").format(unit=unit, points=_points(score, max_score)))
    console.print("  [bold]" + _("total: {points}").format(points=_points(report.score, report.max_score))
                  + "[/bold]")
    if report.pending_gpu:
        pts = sum(r.points for r in report.pending_gpu)
        console.print("  [cyan]" + _("{n} test(s), {points} points, pending GPU:").format(
            n=len(report.pending_gpu), points=f"{pts:g}") + "[/cyan] "
            + _("not counted; they are graded on a machine with a CUDA GPU or in the docker image"))
        for line in pending_lines(report.pending_gpu):
            console.print(f"    [cyan]{escape(line)}[/cyan]")
    nxt = next_exercise(report.results)
    if nxt is not None:
        word, style = label(nxt.status)
        console.print("\n  " + _("next:") + f" [{style}]{nxt.unit} · {nxt.exercise}[/{style}] ({word}): "
                      f"{escape(nxt.message)}")


# Why a test is pending, as the skip says it (the text before its first ";"), shown in the learner's language.
PENDING_REASONS = (
    N_("this tier times kernels on a CUDA device"),
    N_("this test runs the compiled CUDA C++ kernel on a GPU"),
    N_("counting bank conflicts needs the CPU executor (g++ on x86-64 Linux)"),
    N_("this test runs the CUDA C++ kernel on a GPU, or on the CPU executor, which needs g++ on x86-64 Linux"),
)


def pending_lines(pending: list[TestResult]) -> list[str]:
    """One line per exercise and tier left pending, with its points and why: which tests wait for a GPU must
    be plain (a .cu kernel's values are not checked here even when its compile checks pass)."""
    groups: dict[tuple[str, str, str], list[TestResult]] = {}
    for r in pending:
        groups.setdefault((r.unit, r.exercise, r.tier.value), []).append(r)
    lines = []
    for (unit, exercise, tier), rs in groups.items():
        why = rs[0].message.removeprefix("pending GPU: ").split(";")[0]
        pts = sum(r.points for r in rs)
        lines.append(f"{unit} · {exercise} · {tier}: "
                     + _("{n} test(s), {points} points ({why})").format(n=len(rs), points=f"{pts:g}", why=_(why)))
    return lines


def next_exercise(results: list[TestResult] | tuple[TestResult, ...]) -> TestResult | None:
    """The first problem of the first exercise, in course order, that is not at full marks: within a unit, an
    exercise that fails (a wrong value, a module that does not import) before one still TODO. Pending-GPU
    tests and the grader's own errors are not the learner's to fix."""
    by_unit: dict[str, list[TestResult]] = {}
    for r in results:
        by_unit.setdefault(r.unit, []).append(r)
    for rs in by_unit.values():
        for wanted in (Status.FAILED, Status.TODO):
            first = next((r for r in _by_exercise(rs) if r.status is wanted and not _gated(r)), None)
            if first is not None:
                return first
    return None


def _by_exercise(results: list[TestResult]) -> list[TestResult]:
    """Results grouped by exercise (in the order tests first meet it), each exercise's tiers in grading order."""
    return [r for rs in _rows(results).values() for r in rs]
