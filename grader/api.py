"""Typed entry points the CLI calls: ``grade``, ``units``, ``stubs``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.core import command, failures, stubs
from grader.core import timeout as call_limit
from grader.core.results import GradeReport, TestResult, Tier, read_results
from grader.core.target import REPO_ROOT, TARGET_ENV, display_path, is_unit

TESTS = REPO_ROOT / "tests"


class GraderError(RuntimeError):
    """The grader itself could not run (not a low score: a broken environment or bad arguments)."""


def all_units() -> list[str]:
    """Every unit that has grading tests, in course order (lectures, then capstones)."""
    found = [p.name for p in TESTS.iterdir() if p.is_dir() and is_unit(p.name)]
    return sorted(found, key=lambda u: (u[0] != "l", int(re.match(r"[lc](\d+)", u).group(1))))


def resolve_units(wanted: Sequence[str]) -> list[str]:
    """``23``, ``L23``, ``l23``, ``C3`` or a full unit name → unit names; GraderError if unknown."""
    units = all_units()
    if not wanted:
        return units
    out = []
    for w in wanted:
        key = w.strip().lower()
        key = f"l{int(key):02d}" if key.isdigit() else key
        if re.fullmatch(r"l\d", key):
            key = f"l0{key[1]}"
        match = [u for u in units if u == key or u.split("_", 1)[0] == key]
        if not match:
            raise GraderError(f"no unit {w!r}; units with tests: {', '.join(units)}")
        out += [m for m in match if m not in out]
    return out


def grade(
    target: Path,
    *,
    units: Sequence[str] = (),
    exercises: Sequence[str] = (),
    junit: Path | None = None,
    log: Path | None = None,
    timeout: float | None = None,
    call_timeout: float = 0.0,
    progress: Callable[[Progress], None] | None = None,
    case: int = 0,
) -> GradeReport:
    """Grade ``target`` (a folder laid out like exercises/) on the given units; all by default.

    Runs the units' grading tests with pytest in a child process, so the learner's code cannot
    outlive or disturb the caller, and reads back the results the plugin recorded. ``timeout``:
    seconds before the child is stopped (GraderError); none by default. ``call_timeout``: seconds one
    learner call may run before its test fails (grading/timeout.py; 0: no limit). Ctrl-C raises
    :class:`GradingInterrupted` holding what was graded. ``progress`` is called as each test ends (and
    with its total once collection is done), from a thread of this process. ``case``: with one exercise, only
    its N-th graded test (``python -m grader run``).
    """
    target = Path(target).resolve()
    if not target.is_dir():
        raise GraderError(f"target {target} is not a folder: pass a folder laid out like exercises/")
    chosen = resolve_units(units)
    with tempfile.TemporaryDirectory(prefix="dripstone-") as tmp:
        report_path = Path(tmp) / "results.jsonl"
        cmd = command.pytest_command(sys.executable, REPO_ROOT, command.unit_paths(REPO_ROOT, chosen), target=target,
                                     report=report_path, exercises=exercises, junit=junit, call_timeout=call_timeout,
                                     case=case)
        # Hypothesis keeps a cache of constants beside its database: keep both out of the repo and target.
        env = {**os.environ, TARGET_ENV: str(target), "PYTHONDONTWRITEBYTECODE": "1",
               "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp) / "hypothesis")}
        try:
            with _streaming(report_path, progress):
                proc, results = _run_grading(cmd, env, report_path, timeout, display_path(target))
        except subprocess.TimeoutExpired:
            raise GraderError(f"grading {display_path(target)} ran past {timeout:g} s and was stopped: "
                              "look for an endless loop or a hang in it") from None
        if log:
            log.write_text(proc.stdout + proc.stderr)
    if proc.returncode == 4 and "ERROR: " in proc.stdout + proc.stderr:  # the plugin's UsageError: a bad argument
        lines = (proc.stdout + proc.stderr).splitlines()
        raise GraderError("\n".join(x.removeprefix("ERROR: ") for x in lines if x.startswith("ERROR: ")))
    if proc.returncode not in (0, 1) or (not results and proc.returncode != 5):
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise GraderError(f"pytest exited with {proc.returncode} while grading {display_path(target)}:\n{tail}")
    if not results:
        raise GraderError(f"no grading tests matched (units {chosen}, exercises {list(exercises) or 'all'})")
    return GradeReport(target=display_path(target), results=tuple(failures.gate_all(results)))


@dataclass(frozen=True)
class Progress:
    """Where a grading run is: ``done`` of ``total`` tests (0 until collected), the last one ended."""

    done: int
    total: int
    last: TestResult | None = None


@contextlib.contextmanager
def _streaming(report: Path, progress: Callable[[Progress], None] | None, every_s: float = 0.2) -> Iterator[None]:
    """Within the block, call ``progress`` whenever the plugin's results file (``report``) grows: it holds one
    line per ended test, ``<report>.total`` the number collected. A child run again after a stuck call starts
    both afresh: the tests of earlier children are carried over."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        carried, seen, shown = 0, 0, (-1, -1)
        while True:
            ended = stop.wait(every_s)
            try:
                results = read_results(report)
            except (ValueError, KeyError, TypeError):  # a line being written: read it next time
                continue
            if len(results) < seen:  # a new child: the file started afresh
                carried += seen
            seen = len(results)
            total_file = Path(f"{report}.total")
            total = carried + int(total_file.read_text() or 0) if total_file.exists() else 0
            if (carried + seen, total) != shown:
                shown = (carried + seen, total)
                progress(Progress(carried + seen, max(total, carried + seen), results[-1] if results else None))
            if ended:
                return

    thread = threading.Thread(target=watch, name="dripstone-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


class GradingInterrupted(KeyboardInterrupt):
    """Ctrl-C while grading: ``report`` holds the tests graded before it."""

    def __init__(self, report: GradeReport):
        super().__init__(f"grading was interrupted after {len(report.results)} test(s)")
        self.report = report


def _run_grading(cmd: list[str], env: dict[str, str], report: Path, timeout: float | None,
                 target: str) -> tuple[subprocess.CompletedProcess[str], list[TestResult]]:
    """Run the grading child and read its results. A child the per-call watchdog ended (a learner call stuck in
    compiled code, its test recorded as failed) is followed by a new one for the tests it did not reach."""
    outputs: list[str] = []
    results: list[TestResult] = []
    hung: list[str] = []  # functions a watchdog stopped: the next child fails their calls at once
    while True:
        try:
            proc = _run_child([*cmd, *(a for r in results for a in ("--deselect", r.nodeid)),
                               *(a for name in hung for a in (call_limit.HUNG_OPTION, name))], env, timeout)
        except KeyboardInterrupt:
            raise GradingInterrupted(GradeReport(target, tuple(results + read_results(report)))) from None
        outputs.append(proc.stdout + proc.stderr)
        new = read_results(report)  # each child starts the file afresh
        results += new
        if proc.returncode != call_limit.EXIT_STUCK or not new:
            break
        hung += [name for r in new if (r.kind in ("", "timeout") and (name := call_limit.hung_name(r.message))
                                       and name not in hung)]
    returncode = 1 if len(outputs) > 1 and proc.returncode in (0, 5) else proc.returncode
    return subprocess.CompletedProcess(cmd, returncode, "".join(outputs), ""), results


WAKE_S = 0.5  # how often the wait for a grading child returns to Python, so that a pending Ctrl-C is raised


def _run_child(cmd: list[str], env: dict[str, str], timeout: float | None) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` that, on Ctrl-C, lets the child stop (it gets SIGINT too) before raising
    KeyboardInterrupt; on ``timeout``, kills it and raises TimeoutExpired."""
    deadline = None if timeout is None else time.monotonic() + timeout
    env = {**env, call_limit.PARENT_ENV: str(os.getpid())}  # the child dies with this process (timeout.die_with_parent)
    with subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as child:
        try:
            while True:  # in slices: Ctrl-C handled by another thread of this process (the progress display's) is
                try:  # raised here only when this thread runs Python again, which a wait without end never does
                    left = WAKE_S if deadline is None else min(WAKE_S, deadline - time.monotonic())
                    out, err = child.communicate(timeout=max(left, 0.0))
                    break
                except subprocess.TimeoutExpired:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise
        except KeyboardInterrupt:
            _stop(child)
            raise
    return subprocess.CompletedProcess(cmd, child.returncode, out, err)


def _stop(child: subprocess.Popen[str]) -> None:
    """The child after Ctrl-C: a moment to stop on its own SIGINT, one sent if only this process got it, a few
    seconds to finish, then killed."""
    for wait_s in (1, 5):
        try:
            child.communicate(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signal.SIGINT)
        except KeyboardInterrupt:  # Ctrl-C again: do not wait
            break
    child.kill()
    child.communicate()


def check_stubs(root: Path = REPO_ROOT) -> list[stubs.Drift]:
    """How exercises/ differs from the stubs solutions/ generates (edited, stale or invalid: see stubs.Drift)."""
    return stubs.check(root / "solutions", root / "exercises")


def write_stubs(units: Sequence[str] = (), *, force: bool = False, root: Path = REPO_ROOT) -> list[Path]:
    """Regenerate exercises/ from solutions/ (every unit, or the named ones). Raises stubs.StubConflict, writing
    nothing, when a file differs from the stub last generated there (a learner's answers), unless ``force``."""
    return stubs.write(root / "solutions", root / "exercises", tuple(units), force=force)


def pristine_stubs(unit: str, root: Path = REPO_ROOT) -> dict[Path, str]:
    """The stub files of ``unit`` (path relative to the unit → text) as the course ships them: generated from
    solutions/ where it exists, else the copy a student release keeps in ``.stubs/``."""
    if (root / "solutions" / unit).is_dir():
        return {rel.relative_to(unit): text for rel, text in stubs.generate(root / "solutions", (unit,)).items()}
    copy = root / stubs.PRISTINE / unit
    if copy.is_dir():
        return {p.relative_to(copy): p.read_text() for p in sorted(copy.rglob("*")) if p.is_file()}
    raise GraderError(f"neither solutions/{unit}/ nor {stubs.PRISTINE}/{unit}/ is here, so the stub of {unit} is "
                      "unknown: get it from your course's release")


def reset(spec: str, *, root: Path = REPO_ROOT, exercises: Path | None = None) -> list[stubs.Restored]:
    """Restore stubs in exercises/, each replaced version first copied to ``exercises/<unit>/.backup/``.

    ``spec``: ``<unit>`` (every file of the unit), ``<unit>:<exercise>`` (that function only, in a Python
    module; the whole file for a CUDA kernel) or ``<unit>:<file>`` (``23:softmax.py``). Deletes nothing.
    """
    unit_spec, _, what = spec.partition(":")
    chosen = resolve_units([unit_spec])
    if len(chosen) != 1:
        raise GraderError(f"{unit_spec!r} names {len(chosen)} units ({', '.join(chosen)}): name one")
    pristine = pristine_stubs(chosen[0], root)
    folder = (exercises or root / "exercises") / chosen[0]
    try:
        if not what:
            return [stubs.restore(folder / rel, text) for rel, text in pristine.items()]
        if Path(what) in pristine:
            return [stubs.restore(folder / what, pristine[Path(what)])]
        rel = stubs.find_exercise(pristine, what)
        return [stubs.restore(folder / rel, pristine[rel], what if rel.suffix == ".py" else None)]
    except stubs.ResetError as exc:
        raise GraderError(f"{chosen[0]}: {exc}") from None


def manifest(units: Sequence[str] = ()) -> list[dict[str, object]]:
    """The grading tests of ``units`` (all by default) as the plugin collects them: one dict per test with
    nodeid, unit, exercise, tier, points and hint. No learner code runs; GraderError if collection fails."""
    chosen = resolve_units(units)
    with tempfile.TemporaryDirectory(prefix="dripstone-manifest-") as tmp:
        path = Path(tmp) / "manifest.json"
        cmd = command.pytest_command(sys.executable, REPO_ROOT, command.unit_paths(REPO_ROOT, chosen), manifest=path,
                                     collect_only=True)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp) / "h")}
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not path.is_file():
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise GraderError(f"collecting the grading tests of {', '.join(chosen)} failed (pytest exit "
                              f"{proc.returncode}); fix the collection errors below:\n{tail}")
        return json.loads(path.read_text())


def tier_exercises(tier: str | None = None) -> dict[str, list[str]]:
    """``{unit: [exercise, ...]}`` of every unit with grading tests of ``tier`` (any tier: None), in course order;
    exercises in the order their tests are collected. ``tier_exercises("gpu_perf")``: the kernel units."""
    if tier is not None and tier not in {t.value for t in Tier}:
        raise GraderError(f"no tier {tier!r}; tiers: {', '.join(t.value for t in Tier)}")
    found: dict[str, list[str]] = {}
    for test in manifest():
        if tier in (None, test["tier"]) and test["exercise"] not in found.setdefault(str(test["unit"]), []):
            found[str(test["unit"])].append(str(test["exercise"]))
    return {u: found[u] for u in all_units() if found.get(u)}
