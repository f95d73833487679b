"""``python -m grader``: the commands; each one calls a typed function of :mod:`grader.api`."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from grader import api
from grader.core import results, stubs
from grader.core import timeout as call_limit
from grader.core.target import REPO_ROOT, display_path
from grader.drill import command as drill_command
from grader.learner import history, learner_commands, scoreboard
from grader.learner.live import ProgressLine
from grader.tools import doctor


def _grade(args: argparse.Namespace) -> int:
    console = Console(width=None if sys.stdout.isatty() else 120)
    line = ProgressLine()
    try:
        report = api.grade(Path(args.target), units=args.unit, exercises=args.exercise,
                           junit=args.junit and Path(args.junit), log=args.log and Path(args.log),
                           call_timeout=args.timeout, progress=line)
    except api.GraderError as exc:
        line.clear()
        console.print(f"[red]grader error:[/red] {escape(str(exc))}")
        return 2
    except api.GradingInterrupted as stop:
        line.clear()
        if stop.report.results:
            scoreboard.render(stop.report, console, verbose=args.verbose)
        console.print(f"[yellow]grading was interrupted (Ctrl-C) after {len(stop.report.results)} test(s):[/yellow] "
                      "the scoreboard shows only what was graded before it")
        return 130
    line.clear()
    history.save_quietly(report)
    scoreboard.render(report, console, verbose=args.verbose)
    if args.json:
        results.write_gradescope(report, Path(args.json))
        console.print(f"  wrote {args.json} (Gradescope results.json)")
    if args.csv:
        results.write_csv(report, Path(args.csv))
        console.print(f"  wrote {args.csv}")
    if args.junit:
        console.print(f"  wrote {args.junit} (JUnit XML)")
    return 0  # grading ran: the score is in the report, not in the exit status


LEARNER_EDITS = (
    "your answers in exercises/ differ from the stubs: that is expected for a learner. `make test` and "
    "`python -m grader stubs` are for course authors; grade your work with `make grade` (and restore one stub, "
    "keeping a backup, with `make reset L=<unit> E=<exercise>`).\n"
    "Course authors: move hand edits into solutions/, then `python -m grader stubs --force` overwrites these files."
)


def _stubs(args: argparse.Namespace) -> int:
    if args.check:
        return _check_stubs()
    try:
        written = api.write_stubs(args.unit, force=args.force)
    except stubs.StubConflict as exc:
        print(f"stubs: {exc}")
        return 1
    for path in written:
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    return 0


def _check_stubs() -> int:
    drift = api.check_stubs()
    for d in drift:
        print(f"exercises/{d.path}: {d.problem}")
    if any(d.kind == stubs.EDITED for d in drift):
        print(LEARNER_EDITS)
    if any(d.kind != stubs.EDITED for d in drift):
        print("exercises/ is out of date with solutions/: run `python -m grader stubs` and commit the result "
              "(it never overwrites an edited file)")
    if drift:
        return 1
    print("exercises/ is in sync with solutions/")
    return 0


def _reset(args: argparse.Namespace) -> int:
    try:
        restored = api.reset(args.exercise)
    except api.GraderError as exc:
        print(f"reset: {exc}")
        return 2
    for r in restored:
        what = f"`{r.function}` in {display_path(r.path)}" if r.function else display_path(r.path)
        if not r.changed:
            print(f"{what}: already the stub, nothing to do")
        elif r.backup is None:
            print(f"restored {what} (it was missing)")
        else:
            print(f"restored {what} from the stub; your version is kept in {display_path(r.backup)}")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    return doctor.emit(doctor.doctor(blocking_only=args.blocking), blocking=args.blocking)


def _units(args: argparse.Namespace) -> int:
    if not args.tier and not args.exercises:
        print("\n".join(api.all_units()))
        return 0
    try:
        found = api.tier_exercises(args.tier)
    except api.GraderError as exc:
        print(f"grader error: {exc}", file=sys.stderr)
        return 2
    for unit, exercises in found.items():
        print(f"{unit}: {' '.join(exercises)}" if args.exercises else unit)
    return 0


def _nbgrader_submit(args: argparse.Namespace) -> int:
    from grader.instructor import nbgrader_submissions

    try:
        written = nbgrader_submissions.to_notebooks(Path(args.folder), Path(args.course), args.assignment)
    except (nbgrader_submissions.CourseError, OSError) as exc:
        print(f"nbgrader-submit error: {exc}")
        return 2
    students = {p.parent.parent.name for p in written}
    print(f"wrote {len(written)} notebook(s) for {len(students)} student(s) under {args.course}/submitted/; "
          f"then: nbgrader autograde {args.assignment}")
    return 0


def _nbgrader_course(args: argparse.Namespace) -> int:
    from grader.instructor import nbgrader_course

    tiers = [results.Tier(t) for t in args.tier] or list(nbgrader_course.CPU_TIERS)
    try:
        course = nbgrader_course.write_course(Path(args.dir), units=args.unit, assignment=args.assignment,
                                              course_id=args.course_id, tiers=tiers)
    except api.GraderError as exc:
        print(f"grader error: {exc}")
        return 2
    for ex in course.exercises:
        print(f"  {ex.unit} · {ex.name}: {ex.points:g} points")
    print(f"wrote {course.root}/nbgrader_config.py and {len(course.notebooks)} notebook(s) in "
          f"source/{course.assignment}/; next: cd {course.root} && nbgrader generate_assignment {course.assignment}")
    return 0


def _batch(args: argparse.Namespace) -> int:
    from grader.instructor import batch, class_report, sandbox

    console = Console(width=None if sys.stdout.isatty() else 120)
    if (args.submissions is None) == (args.nbgrader is None):
        console.print("[red]batch error:[/red] pass a folder of submissions, or --nbgrader COURSE --assignment A")
        return 2
    if args.max_examples < 0:
        console.print(f"[red]batch error:[/red] --max-examples {args.max_examples}: give a count >= 1, or 0 for all")
        return 2
    try:
        late = None if args.due is None else class_report.Late(
            datetime.datetime.fromisoformat(args.due).astimezone().timestamp(), args.late_penalty)
    except ValueError:
        console.print(f"[red]batch error:[/red] --due {escape(args.due)}: give a date and time such as "
                      "2026-12-20T23:59 (ISO 8601, local time unless it names a zone)")
        return 2
    if not 0 <= args.late_penalty <= 1:
        console.print(f"[red]batch error:[/red] --late-penalty {args.late_penalty}: give a share between 0 and 1")
        return 2
    options = batch.BatchOptions(args.submissions and Path(args.submissions), Path(args.out), jobs=args.jobs,
                                 units=tuple(args.unit), exercises=tuple(args.exercise),
                                 backend=batch.Backend(args.backend), address=args.address,
                                 limits=sandbox.Limits(wall_s=args.timeout, gpu=args.gpus,
                                                       max_examples=args.max_examples),
                                 nbgrader=args.nbgrader and Path(args.nbgrader), assignment=args.assignment,
                                 regrade=tuple(args.regrade), force=args.force, late=late)
    try:
        with batch.progress_bar(console) as progress:
            if options.backend is batch.Backend.RAY:
                from grader.instructor import batch_ray

                report = batch_ray.run_batch(options, progress)
            else:
                report = batch.run_batch(options, progress)
    except (batch.BatchError, sandbox.SandboxUnavailable, api.GraderError) as exc:
        console.print(f"[red]batch error:[/red] {escape(str(exc))}")
        return 2
    batch.print_summary(report, console)
    return 3 if report.layout_warning() else 0


def _release(args: argparse.Namespace) -> int:
    from grader.instructor import release

    try:
        built = release.build(Path(args.out))
    except release.ReleaseError as exc:
        print(f"release error: {exc}")
        return 2
    print(f"wrote {built.files} files to {built.out} (units: {', '.join(built.units)}); "
          "no solutions/, kernels_ref/ or known corpora")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grader", description="Dripstone autograder")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a folder laid out like exercises/ and print the scoreboard")
    g.add_argument("--target", default=str(REPO_ROOT / "exercises"), help="folder to grade (default exercises/)")
    g.add_argument("--unit", "-u", action="append", default=[], help="unit: 23, L23, c3 or full name; repeatable")
    g.add_argument("--exercise", "-e", action="append", default=[], help="only this exercise (function name)")
    g.add_argument("--json", help="write Gradescope's results.json here")
    g.add_argument("--junit", help="write JUnit XML here")
    g.add_argument("--csv", help="write one CSV row per test here")
    g.add_argument("--log", help="write the full pytest output here")
    g.add_argument("--verbose", "-v", action="store_true", help="one line per test")
    g.add_argument("--timeout", type=float, default=call_limit.DEFAULT_S, metavar="S",
                   help=f"fail a test when one call of your code runs longer than S seconds (an endless loop?) "
                        f"and grade the rest (default {call_limit.DEFAULT_S:g}; 0: no limit)")
    g.set_defaults(func=_grade)
    s = sub.add_parser("stubs", help="course authors: regenerate exercises/ from solutions/ (never over edits)")
    s.add_argument("--check", action="store_true", help="fail if exercises/ is out of date")
    s.add_argument("--unit", "-u", action="append", default=[], help="only this unit (full name); repeatable")
    s.add_argument("--force", action="store_true",
                   help="overwrite files edited since they were generated (course authors; learners: never)")
    s.set_defaults(func=_stubs)
    z = sub.add_parser("reset", help="restore an exercise's stub; the version it replaces goes to .backup/")
    z.add_argument("exercise", metavar="UNIT[:EXERCISE]",
                   help="23 (the whole unit), 23:softmax_fused (that function only) or 23:softmax.py (that file)")
    z.set_defaults(func=_reset)
    u = sub.add_parser("units", help="list the units that have grading tests")
    u.add_argument("--tier", choices=[t.value for t in results.Tier],
                   help="only units with tests of this tier (collects the tests: gpu_perf lists the kernel units)")
    u.add_argument("--exercises", action="store_true",
                   help="print `unit: exercise ...`: the exercises graded (those of --tier)")
    u.set_defaults(func=_units)
    d = sub.add_parser("doctor", help="what this machine can grade, and the command that fixes each problem")
    d.add_argument("--blocking", action="store_true", help=doctor.BLOCKING_HELP)
    d.set_defaults(func=_doctor)
    ns = sub.add_parser("nbgrader-submit", help="folder submissions (laid out like exercises/) into an nbgrader "
                        "course's submitted/ notebooks, for nbgrader autograde")
    ns.add_argument("folder", help="one folder per student, each laid out like exercises/")
    ns.add_argument("--course", required=True, help="the nbgrader course (written by nbgrader-course)")
    ns.add_argument("--assignment", default="dripstone", help="nbgrader assignment name (default dripstone)")
    ns.set_defaults(func=_nbgrader_submit)
    n = sub.add_parser("nbgrader-course", help="write an nbgrader course (config + one notebook per unit)")
    n.add_argument("dir", help="the course folder (nbgrader's course root)")
    n.add_argument("--unit", "-u", action="append", default=[], help="unit: 23, L23, c3 or full name; repeatable")
    n.add_argument("--assignment", default="dripstone", help="nbgrader assignment name (default dripstone)")
    n.add_argument("--course-id", default="dripstone", help="nbgrader course id (default dripstone)")
    n.add_argument("--tier", action="append", default=[], choices=[t.value for t in results.Tier],
                   help="tiers the autograder cells score; repeatable (default correctness and efficiency)")
    n.set_defaults(func=_nbgrader_course)
    b = sub.add_parser("batch", help="grade a folder of submissions, each in its own sandbox (resumable)")
    b.add_argument("submissions", nargs="?", help="one folder, .zip or .tar.gz per student, laid out like exercises/")
    b.add_argument("--nbgrader", metavar="COURSE", help="grade an nbgrader course's COURSE/submitted/ instead")
    b.add_argument("--assignment", help="with --nbgrader: the assignment to grade")
    b.add_argument("--out", required=True, help="results.json and log per student, grades.csv, summary.json")
    b.add_argument("--jobs", "-j", type=int, default=1, help="students graded at once (default 1)")
    b.add_argument("--unit", "--units", "-u", action="append", default=[], help="unit to grade; repeatable")
    b.add_argument("--exercise", "-e", action="append", default=[], help="only this exercise; repeatable")
    b.add_argument("--backend", choices=["local", "ray"], default="local", help="local processes or Ray tasks")
    b.add_argument("--address", help="Ray cluster address HOST:PORT (default: the cluster running on this machine, "
                   "as `ray start` left it, else a private local one; `local`: always a private local one)")
    b.add_argument("--timeout", type=float, default=900.0, help="wall-clock seconds per student (default 900)")
    b.add_argument("--max-examples", type=int, default=0, metavar="N",
                   help="a quick pass: at most N examples per property test (default: as the tests say)")
    b.add_argument("--regrade", action="append", default=[], metavar="NAME",
                   help="grade this student again whatever the ledger says (repeatable; as grades.csv names it)")
    b.add_argument("--force", action="store_true", help="grade every student again (the ledger's grades are replaced)")
    b.add_argument("--due", metavar="TIME", help="due time (ISO 8601, e.g. 2026-12-20T23:59): grades.csv gets each "
                   "submission's time, days late and the total after the late rule")
    b.add_argument("--late-penalty", type=float, default=0.0, metavar="P",
                   help="with --due: share of the total lost per started day late (default 0: flagged only)")
    b.add_argument("--gpus", action="store_true",
                   help="grade the GPU tiers too: one GPU per job (a Ray task asks for one), bound into its sandbox")
    b.set_defaults(func=_batch)
    r = sub.add_parser("release", help="write the learner-facing tree (no solutions, references or corpora)")
    r.add_argument("out", help="a new or empty folder")
    r.set_defaults(func=_release)
    drill_command.add_parser(sub)
    for register in learner_commands():
        register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(("grader.instructor", "grader.authoring.")):
            print(f"`{args.command}` is an instructor tool: it is not part of the student release "
                  "(run it in the course repository)", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
