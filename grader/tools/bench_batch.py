"""Batch grading throughput, measured side by side in one run: ``make bench-batch`` (instructors).

Grades N copies of ``solutions/`` for one unit (L23 by default) three ways on this machine:

* ``alone``: ``grader.api.grade`` one student after another, no sandbox, no boundary (the cost of
  grading itself);
* ``batch --jobs 1`` and ``batch --jobs J``: the sandboxed batch (bwrap or its fallback, a forked
  worker per exercise's tests, the static audit, the disk watch);
* ``nbgrader autograde`` (where nbgrader is installed; ``--no-nbgrader`` skips it): the same copies as
  notebooks of a course ``grader nbgrader-course`` wrote, autograded by nbgrader's own CLI (one core);
* ``batch --backend ray`` (where ray is installed; ``--no-ray`` skips it) on a cluster that is already up,
  as an instructor's would be: the one running on this machine if any, else one node of ``--jobs`` CPUs
  started before the timing (its start is printed apart). ``--ray-nodes N`` builds N raylets on this
  machine instead (a head and N-1 workers, one CPU each, as ``ray start --address`` joins machines), to
  see what spreading over nodes costs; on one machine they share its cores.

It prints students per minute for each, and the isolation overhead per student (batch --jobs 1
against alone). Every copy must score full marks in every mode, or the run says which did not.
Noisy machines give noisy numbers: compare the rows of one run, not runs on different days. With
``--rounds 2`` every mode runs twice, the second round in the reverse order, and each row sums both: a
machine whose speed drifts during the run then favours no mode.

    python -m grader.tools.bench_batch [--students 20] [--jobs 2] [--unit 23] [--no-nbgrader] [--rounds 1]
                                       [--no-ray] [--ray-nodes N]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grader import api
from grader.core.target import REPO_ROOT
from grader.instructor import batch, batch_ray, sandbox


def _copies(root: Path, unit: str, n: int) -> Path:
    subs = root / "submissions"
    for i in range(n):
        shutil.copytree(REPO_ROOT / "solutions" / unit, subs / f"student_{i:03d}" / unit,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return subs


def _nbgrader(course: Path, *args: str) -> None:
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(course / ".jupyter"),
           "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", "")))}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                          text=True)
    if proc.returncode:
        raise RuntimeError(f"nbgrader {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")


def _nbgrader_submissions(course: Path, unit: str, n: int) -> None:
    """N students handing in the released notebook with the solutions in its answer cells."""
    nb = json.loads((course / "release" / "bench" / f"{unit}.ipynb").read_text())
    code = {f"module-{p.name.replace('.', '-')}": f"%%writefile {unit}/{p.name}\n{p.read_text()}"
            for p in (REPO_ROOT / "solutions" / unit).iterdir() if p.is_file()}
    for cell in nb["cells"]:
        cell["source"] = code.get(cell["metadata"]["nbgrader"]["grade_id"], cell["source"])
    for i in range(n):
        dest = course / "submitted" / f"student_{i:03d}" / "bench"
        dest.mkdir(parents=True)
        (dest / f"{unit}.ipynb").write_text(json.dumps(nb))


def nbgrader_autograde(root: Path, unit: str, n: int, problems: list[str]) -> float:
    """Wall seconds of ``nbgrader autograde`` on N copies of the solutions (the course built beforehand)."""
    from grader.instructor import nbgrader_course

    course = Path(tempfile.mkdtemp(prefix="course-", dir=root))
    nbgrader_course.write_course(course, units=[unit], assignment="bench")
    _nbgrader(course, "generate_assignment", "bench")
    _nbgrader_submissions(course, unit, n)
    start = time.monotonic()
    _nbgrader(course, "autograde", "bench")
    wall = time.monotonic() - start
    _nbgrader(course, "export")
    with (course / "grades.csv").open(newline="") as f:
        problems += [f"nbgrader autograde: {r['student_id']} scored {r['score']}/{r['max_score']}"
                     for r in csv.DictReader(f) if float(r["score"]) != float(r["max_score"])]
    return wall


def _ray_cluster(stack: contextlib.ExitStack, nodes: int, jobs: int) -> tuple[str, str, str]:
    """(address, row name, note) of the cluster the Ray row grades on, up before any timing."""

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    running = None if nodes else batch_ray.running_cluster()
    if running:
        return running, "batch --backend ray", f"ray: the cluster running at {running} (reused)"
    nodes, cpus = (nodes, 1) if nodes else (1, jobs)
    start = time.monotonic()
    address = stack.enter_context(batch_ray.local_cluster(nodes=nodes, cpus=cpus))
    note = (f"ray: {nodes} raylet(s) on this machine x {cpus} CPU, started in {time.monotonic() - start:.1f} s "
            "before the timing (not counted: batch joins a running cluster)")
    return address, f"batch ray {nodes} node(s)x{cpus}cpu", note


def _full(report) -> bool:
    return report.score == report.max_score and report.max_score > 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.tools.bench_batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--unit", default="23")
    parser.add_argument("--no-nbgrader", action="store_true", help="leave out the nbgrader autograde row")
    parser.add_argument("--rounds", type=int, default=1, help="run every mode this many times, alternating the order")
    parser.add_argument("--no-ray", action="store_true", help="leave out the batch --backend ray row")
    parser.add_argument("--ray-nodes", type=int, default=0, metavar="N",
                        help="grade the Ray row on N raylets started on this machine, one CPU each (default: the "
                             "cluster running here, else one node of --jobs CPUs)")
    args = parser.parse_args(argv)
    unit = api.resolve_units([args.unit])[0]
    runtime = sandbox.probe()
    problems: list[str] = []
    ray_note = ""
    with tempfile.TemporaryDirectory(prefix="dripstone-bench-batch-") as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        subs = _copies(root, unit, args.students)

        def alone() -> float:
            start = time.monotonic()
            for student in sorted(subs.iterdir()):
                report = api.grade(student, units=[unit])
                if not _full(report):
                    problems.append(f"alone: {student.name} scored {report.score}/{report.max_score}")
            return time.monotonic() - start

        def in_batch(jobs: int, name: str = "", **options) -> float:
            out = Path(tempfile.mkdtemp(prefix=f"out-{jobs}-", dir=root))
            start = time.monotonic()
            grade = batch_ray.run_batch if options.get("backend") is batch.Backend.RAY else batch.run_batch
            result = grade(batch.BatchOptions(subs, out, jobs=jobs, units=(unit,), **options))
            wall = time.monotonic() - start
            for graded in result.graded:
                if graded.score != graded.max_score or graded.problems:
                    problems.append(f"{name or f'batch --jobs {jobs}'}: {graded.student} scored "
                                    f"{graded.score}/{graded.max_score}")
            return wall

        modes: dict[str, Callable[[], float]] = {"alone (no sandbox)": alone}
        if not args.no_nbgrader and importlib.util.find_spec("nbgrader") is not None:
            modes["nbgrader autograde"] = lambda: nbgrader_autograde(root, unit, args.students, problems)
        for jobs in dict.fromkeys((1, args.jobs)):
            modes[f"batch --jobs {jobs}"] = lambda jobs=jobs: in_batch(jobs)
        if not args.no_ray and importlib.util.find_spec("ray") is not None:
            address, name, ray_note = _ray_cluster(stack, args.ray_nodes, args.jobs)
            modes[name] = lambda: in_batch(args.jobs, name, backend=batch.Backend.RAY, address=address)
        walls = dict.fromkeys(modes, 0.0)
        for r in range(max(1, args.rounds)):
            for name in list(modes)[:: 1 if r % 2 == 0 else -1]:
                walls[name] += modes[name]()
        rows = [(name, wall, 0) for name, wall in walls.items()]
    n = args.students * max(1, args.rounds)
    print(f"{args.students} copies of solutions/{unit}, {max(1, args.rounds)} round(s); {runtime.describe()}")
    if ray_note:
        print(ray_note)
    print(f"{'mode':<28}{'wall s':>9}{'students/min':>15}{'s/student':>12}")
    for name, wall, _ in rows:
        print(f"{name:<28}{wall:>9.1f}{n / wall * 60:>15.2f}{wall / n:>12.2f}")
    walls = {name: wall for name, wall, _ in rows}
    alone, one = walls["alone (no sandbox)"] / n, walls["batch --jobs 1"] / n
    print(f"isolation overhead per student (batch --jobs 1 vs alone): {one - alone:+.2f} s ({one / alone:.2f}x)")
    if "nbgrader autograde" in walls:
        nb = walls["nbgrader autograde"]
        print("batch vs nbgrader autograde: " + ", ".join(
            f"{name} {nb / wall:.2f}x" for name, wall, _ in rows if name.startswith("batch")))
    ray_rows = [(name, wall) for name, wall, _ in rows if "ray" in name]
    if ray_rows and f"batch --jobs {args.jobs}" in walls:
        local = walls[f"batch --jobs {args.jobs}"]
        print(", ".join(f"{name} vs batch --jobs {args.jobs}: {local / wall:.2f}x" for name, wall in ray_rows))
    for line in problems:
        print(f"NOT FULL MARKS: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
