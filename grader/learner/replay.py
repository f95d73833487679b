"""``python -m grader run <exercise> [--case N]``: replay one graded case and show everything about it.

Grading is derandomized, so a case fails the same way every run. ``run`` grades one exercise (or only
its N-th test, as numbered in the scoreboard's replay line) and shows, for the case: its inputs (the
test's parameters, or hypothesis's falsifying example), what came back against what was expected,
side by side where the values are tensors, the hint for that kind of failure, and what your code
printed (``print``, ``tl.device_print``) during the case.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from grader import api
from grader.core import timeout as call_limit
from grader.core.results import GradeReport, Status, TestResult
from grader.core.target import REPO_ROOT
from grader.i18n import _, pad
from grader.learner.live import ProgressLine
from grader.learner.scoreboard import label


def resolve(spec: str) -> tuple[str, str]:
    """``(unit, exercise)`` of ``softmax_fused``, ``23:softmax_fused`` or ``l23_online_softmax:softmax_fused``."""
    unit_spec, _, exercise = spec.rpartition(":")
    units = api.resolve_units([unit_spec]) if unit_spec else api.all_units()
    if len(units) == 1 and unit_spec:
        return units[0], exercise
    owners = sorted({str(t["unit"]) for t in api.manifest(units) if t["exercise"] == exercise})
    if len(owners) == 1:
        return owners[0], exercise
    if owners:
        raise api.GraderError(f"{exercise!r} is an exercise of {', '.join(owners)}: name the unit "
                              f"({owners[0].split('_')[0]}:{exercise})")
    return api.resolve_units(units)[0] if unit_spec else "", exercise  # the plugin lists the exercises


def replay(spec: str, case: int = 0, *, target: Path = REPO_ROOT / "exercises",
           call_timeout: float = call_limit.DEFAULT_S, progress: ProgressLine | None = None) -> GradeReport:
    """Grade ``spec``'s cases (only case ``case`` if given) in a child process, as ``make grade`` does."""
    unit, exercise = resolve(spec)
    if not unit:  # no unit owns it: let the plugin list the exercises and the closest name
        return api.grade(target, exercises=[exercise], call_timeout=call_timeout, progress=progress)
    return api.grade(target, units=[unit], exercises=[exercise], call_timeout=call_timeout, case=case,
                     progress=progress)


def show(report: GradeReport, case: int, console: Console) -> TestResult | None:
    """The list of cases graded, then the first failing one (or case ``case``) in full."""
    results = list(report.results)
    if not case:
        for n, r in enumerate(results, 1):
            word, style = label(r.status)
            console.print("  " + _("case {n}").format(n=f"{n:>2}") + f"  [{style}]{pad(word, 11)}[/{style}] "
                          f"{r.tier:<11} {escape(r.name)}")
    chosen = results[0] if case else next((r for r in results if r.status in (Status.FAILED, Status.TODO)), None)
    if chosen is None:
        console.print("\n  " + _("every case passes: nothing to replay"))
        return None
    _detail(chosen, console)
    return chosen


def _detail(r: TestResult, console: Console) -> None:
    word, style = label(r.status)
    console.print(f"\n[bold]{r.unit} · {r.exercise} · {escape(r.name)}[/bold] ({r.tier}): [{style}]{word}[/{style}]")
    console.print(Text(r.message))
    for line in r.detail.splitlines():
        if line.startswith("replay:"):
            continue
        console.print(Text(f"  {line}"))
    if r.hint:
        console.print(Text(f"→ {_(r.hint, unit=r.unit)}", style="dim"))
    if r.output:
        console.print("\n" + _("[bold]your prints[/bold] (stdout and stderr of your code during this case):"))
        console.print(Text(r.output))
    elif r.status is Status.FAILED:
        console.print("\n" + escape(_("(your code printed nothing during this case: add print(...) or "
                                      "tl.device_print(...) where you want to look, and run this again)")))


def _run(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 120)
    line = ProgressLine()
    try:
        report = replay(args.exercise, args.case, target=Path(args.target), call_timeout=args.timeout,
                        progress=line)
    except api.GraderError as exc:
        line.clear()
        console.print(f"[red]run:[/red] {exc}")
        return 2
    line.clear()
    show(report, args.case, console)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("run", help="replay one exercise's graded cases: inputs, expected vs actual, your prints")
    r.add_argument("exercise", metavar="[UNIT:]EXERCISE", help="softmax_fused, or 23:softmax_fused")
    r.add_argument("--case", type=int, default=0, metavar="N",
                   help="only the N-th case (the number in the scoreboard's `replay:` line); default: the first "
                        "that fails, after a list of all")
    r.add_argument("--target", default=str(REPO_ROOT / "exercises"), help="folder to grade (default exercises/)")
    r.add_argument("--timeout", type=float, default=call_limit.DEFAULT_S, metavar="S",
                   help=f"limit on one call of your code (default {call_limit.DEFAULT_S:g} s; 0: none)")
    r.set_defaults(func=_run)
