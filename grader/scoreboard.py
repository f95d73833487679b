"""The terminal scoreboard: one row per unit, exercise and tier, with the first failure and a hint."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.results import GradeReport, Status, TestResult, totals

STYLE = {
    Status.PASSED: ("PASS", "green"),
    Status.FAILED: ("FAIL", "red"),
    Status.TODO: ("TODO", "yellow"),
    Status.PENDING_GPU: ("pending GPU", "cyan"),
    Status.ERROR: ("ERROR", "magenta"),
}
# The row shows the most telling status of its tests.
PRECEDENCE = [Status.ERROR, Status.FAILED, Status.TODO, Status.PENDING_GPU, Status.PASSED]


def _row_status(results: list[TestResult]) -> Status:
    present = {r.status for r in results}
    return next(s for s in PRECEDENCE if s in present)


def _first_problem(results: list[TestResult]) -> TestResult | None:
    return next((r for r in results if r.status not in (Status.PASSED,)), None)


def _points(score: float, max_score: float) -> str:
    return f"{score:g}/{max_score:g}"


def render(report: GradeReport, console: Console, *, verbose: bool = False) -> None:
    """Print the scoreboard of a report."""
    table = Table(title=f"Dripstone · {report.target}", box=box.SIMPLE_HEAVY, expand=True)
    for col, kw in [("unit", {}), ("exercise", {}), ("tier", {}), ("points", {"justify": "right"}),
                    ("status", {}), ("first failure · hint", {"ratio": 1, "overflow": "fold"})]:
        table.add_column(col, **kw)
    last_unit = None
    for (unit, exercise, tier), results in report.by_exercise().items():
        status = _row_status(results)
        label, style = STYLE[status]
        problem = _first_problem(results)
        detail = Text()
        if problem is not None:
            detail.append(problem.message)
            if problem.hint:
                detail.append(f"\n→ {problem.hint}", style="dim")
        score, max_score = totals(results)
        shown_max = _points(score, max_score) if status is not Status.PENDING_GPU else f"–/{results[0].points:g}"
        table.add_row(unit if unit != last_unit else "", exercise, str(tier), shown_max,
                      Text(label, style=style), detail)
        last_unit = unit
        if verbose:
            for r in results:
                table.add_row("", "", "", _points(r.score, r.max_score), STYLE[r.status][0],
                              Text(f"{r.name}: {r.message}", style="dim"))
    console.print(table)
    _footer(report, console)


def _footer(report: GradeReport, console: Console) -> None:
    for unit, results in report.by_unit().items():
        score, max_score = totals(results)
        console.print(f"  {unit}: [bold]{_points(score, max_score)}[/bold] points")
    console.print(f"  [bold]total: {_points(report.score, report.max_score)}[/bold]")
    if report.pending_gpu:
        pts = sum(r.points for r in report.pending_gpu)
        console.print(f"  [cyan]{len(report.pending_gpu)} gpu_perf test(s), {pts:g} points, pending GPU:[/cyan] "
                      "not counted; they are graded on a machine with a CUDA GPU or in the docker image")
    failed = [r for r in report.results if r.status is Status.FAILED and r.detail]
    for r in failed[:3]:
        console.print(f"\n[red]{r.unit} · {r.exercise} · {r.name}[/red]: {r.message}")
        console.print(Text(r.detail.strip()[:1500], style="dim"))
    todo = next((r for r in report.results if r.status is Status.TODO), None)
    if todo is not None:
        console.print(f"\n  next: [yellow]{todo.unit} · {todo.exercise}[/yellow]: {todo.message}")
