"""Grade many targets in few processes: the course's self-test (solutions, stubs, known implementations).

``grader.api.grade`` starts one pytest process per target: it pays the interpreter, pytest, the unit's
collection and ``import torch`` every time. The self-test grades some 900 targets, so here one child
process (a *runner*, ``python -m grader.authoring.corpus``) grades up to RUNNER_TARGETS targets one
after the other with ``pytest.main`` in-process (chunks of a unit's targets, several small units' in one
runner: a runner's start, ``import torch`` and the rest, cost 1-3 CPU seconds), and two runners work at a
time (the machines have two cores). Each target is graded only on the test files that hold its exercises
(from the unit's collected manifest), with the same command line as ``api.grade`` (:mod:`grader.core.command`).

Nothing of one target reaches the next: before each run the runner drops the previous target's
modules, the unit's test modules (re-imported fresh: a test module may cache a learner's result) and
the trusted reference modules, and resets Hypothesis's pool of constants it collects from loaded
modules (so the examples drawn do not depend on which targets ran before). Hooks the grader installs
(``traffic.install``, ``interpreter_fixes.install``) are idempotent; each ``pytest.main`` builds its
own plugin manager.

If a runner dies (a target that segfaults) or makes no progress for ``stall_s`` seconds (a target that
hangs), the targets it had not finished are graded again one per process by ``api.grade``, the
authority: a crash costs time, never a verdict. Any run the runner could not grade cleanly (pytest
exit status other than 0 or 1, no results) is graded again the same way, so its error reads as
``api.grade`` words it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from grader.authoring import known
from grader.core import command, failures
from grader.core.results import GradeReport, read_results
from grader.core.target import REPO_ROOT, display_path
from grader.instrument import loader

CHUNK = 16  # a unit's targets in chunks of at most this: a small unit in one chunk, a big one in two (both cores busy)
RUNNER_TARGETS = 64  # chunks packed into one runner up to this many targets (a runner's start is paid once for them)
WORKERS = 2  # runners at a time: the machines have two cores
STALL_S = 600.0  # a runner that finishes no target for this long is stopped; api.grade also stops here
_POLL_S = 0.2


@dataclass(frozen=True)
class Grading:
    """One target graded on one unit: a folder as it is, or a known implementation built into one."""

    key: str
    unit: str
    exercises: tuple[str, ...] = ()
    folder: Path | None = None
    known: Path | None = None

    @classmethod
    def of_folder(cls, folder: Path, unit: str, exercises: Sequence[str] = ()) -> Grading:
        """``folder`` (laid out like exercises/) on ``unit``; key ``<folder>/<unit>``."""
        return cls(f"{display_path(folder)}/{unit}", unit, tuple(exercises), folder=Path(folder).resolve())

    @classmethod
    def of_known(cls, impl: known.KnownImpl) -> Grading:
        """A known implementation on the exercises it targets; key ``impl.name``."""
        return cls(impl.name, impl.unit, impl.exercises, known=impl.path)

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "unit": self.unit, "exercises": list(self.exercises),
                "folder": self.folder and str(self.folder), "known": self.known and str(self.known)}

    @classmethod
    def from_json(cls, d: dict) -> Grading:
        return cls(d["key"], d["unit"], tuple(d["exercises"]), folder=d["folder"] and Path(d["folder"]),
                   known=d["known"] and Path(d["known"]))

    def build(self, tmp: Path) -> Path:
        """The folder to grade (a known implementation is built under ``tmp``)."""
        return self.folder if self.folder is not None else known.build_target(known.read(self.known), tmp)


@dataclass
class UnitCost:
    """What a unit's gradings cost: CPU seconds (user+sys) of its runners, and what had to be graded again."""

    unit: str
    gradings: int = 0
    runners: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    regraded: list[str] = field(default_factory=list)
    regrade_wall_s: float = 0.0
    runner_log: str = ""  # the end of a runner's output when it left some gradings unfinished


@dataclass
class CorpusRun:
    """Reports (or the GraderError ``api.grade`` raised) by grading key, and the cost per unit."""

    reports: dict[str, GradeReport | Exception]
    costs: dict[str, UnitCost]
    target_cpu_s: dict[str, float] = field(default_factory=dict)  # each target's CPU (its runner's and children's)

    def report(self, key: str) -> GradeReport:
        """The report of ``key``; re-raises the error its grading ended with."""
        found = self.reports[key]
        if isinstance(found, Exception):
            raise found
        return found


def course(units: Sequence[str]) -> list[Grading]:
    """What the self-test grades of ``units``: solutions/, exercises/, then every known implementation."""
    impls = {u: [k for kind in known.KINDS for k in known.known_impls(u, kind)] for u in units}
    return [g for u in units for g in (Grading.of_folder(REPO_ROOT / "solutions", u),
                                       Grading.of_folder(REPO_ROOT / "exercises", u),
                                       *(Grading.of_known(k) for k in impls[u]))]


def grade(gradings: Sequence[Grading], *, workers: int = WORKERS, chunk: int = CHUNK,
          runner_targets: int = RUNNER_TARGETS, stall_s: float = STALL_S,
          alone_timeout_s: float = STALL_S) -> CorpusRun:
    """Grade every ``gradings`` target: chunks of a unit's targets, packed into runner processes of at most
    ``runner_targets`` targets, ``workers`` runners at a time.

    A runner that finishes no grading for ``stall_s`` is stopped; what runners did not grade cleanly is
    graded by ``api.grade``, one process each, stopped after ``alone_timeout_s``. A unit's cost is its targets'
    CPU (the runner's and its children's while each was graded), plus its share, by targets, of the rest of its
    runners' CPU (their start).
    """
    keys = [g.key for g in gradings]
    if dupes := sorted({k for k in keys if keys.count(k) > 1}):
        raise ValueError(f"each grading needs its own key; repeated: {dupes}")
    jobs = pack(plan(gradings, chunk), runner_targets)
    run = CorpusRun({}, {g.unit: UnitCost(g.unit) for g in gradings})
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for job, done in zip(jobs, pool.map(lambda j: _run_job(j, stall_s), jobs), strict=True):
            units = [g.unit for g in job]
            targets = sum(done.target_cpu_s.get(g.key, 0.0) for g in job)
            rest_cpu, rest_wall = max(0.0, done.cpu_s - targets), max(0.0, done.wall_s - sum(
                done.target_wall_s.get(g.key, 0.0) for g in job))
            for unit in dict.fromkeys(units):
                cost, mine = run.costs[unit], [g for g in job if g.unit == unit]
                share = len(mine) / len(job)
                cost.gradings += len(mine)
                cost.runners += 1
                cost.cpu_s += sum(done.target_cpu_s.get(g.key, 0.0) for g in mine) + share * rest_cpu
                cost.wall_s += sum(done.target_wall_s.get(g.key, 0.0) for g in mine) + share * rest_wall
                if any(g.key not in done.reports for g in mine):
                    cost.runner_log += done.log
            run.reports.update(done.reports)
            run.target_cpu_s.update(done.target_cpu_s)
    for g in gradings:  # what the runners did not grade cleanly: one process each, the old path
        if g.key not in run.reports:
            start = time.monotonic()
            run.reports[g.key] = _grade_alone(g, alone_timeout_s)
            run.costs[g.unit].regraded.append(g.key)
            run.costs[g.unit].regrade_wall_s += time.monotonic() - start
    return run


def pack(chunks: Sequence[list[Grading]], cap: int = RUNNER_TARGETS) -> list[list[Grading]]:
    """Chunks packed into runner jobs of at most ``cap`` targets (first fit, biggest chunk first; a chunk is never
    split, a unit's chunks keep their order), biggest job first."""
    jobs: list[list[Grading]] = []
    for c in sorted(chunks, key=len, reverse=True):
        home = next((j for j in jobs if len(j) + len(c) <= cap), None)
        if home is None:
            jobs.append(list(c))
        else:
            home.extend(c)
    return sorted(jobs, key=len, reverse=True)


def plan(gradings: Iterable[Grading], chunk: int = CHUNK) -> list[list[Grading]]:
    """Runner jobs: each unit's gradings split into near-equal chunks of at most ``chunk``, biggest first."""
    by_unit: dict[str, list[Grading]] = {}
    for g in gradings:
        by_unit.setdefault(g.unit, []).append(g)
    jobs = []
    for items in by_unit.values():
        n = math.ceil(len(items) / max(1, chunk))
        size = math.ceil(len(items) / n)
        jobs += [items[i:i + size] for i in range(0, len(items), size)]
    return sorted(jobs, key=len, reverse=True)  # stable: course order among equals


def _grade_alone(g: Grading, timeout_s: float) -> GradeReport | Exception:
    from grader import api  # the parent only: a runner never imports the CLI's API

    with tempfile.TemporaryDirectory(prefix="dripstone-known-") as tmp:
        try:
            return api.grade(g.build(Path(tmp)), units=[g.unit], exercises=g.exercises, timeout=timeout_s)
        except api.GraderError as exc:
            return exc


@dataclass
class _Runner:
    """What one runner did: the reports it finished cleanly, its CPU and wall seconds, the end of its output."""

    reports: dict[str, GradeReport]
    target_cpu_s: dict[str, float]
    cpu_s: float
    wall_s: float
    log: str
    target_wall_s: dict[str, float] = field(default_factory=dict)


def _run_job(job: list[Grading], stall_s: float) -> _Runner:
    """Grade ``job`` in one runner process."""
    with tempfile.TemporaryDirectory(prefix="dripstone-corpus-") as tmp:
        out = Path(tmp)
        (out / "spec.json").write_text(json.dumps([g.to_json() for g in job]))
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HYPOTHESIS_STORAGE_DIRECTORY": str(out / "hypothesis")}
        start = time.monotonic()
        with (out / "log.txt").open("wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "grader.authoring.corpus", str(out)], cwd=REPO_ROOT,
                                    env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            cpu_s = _wait(proc, out / DONE, stall_s)
        wall_s = time.monotonic() - start
        tail = "\n".join((out / "log.txt").read_text(errors="replace").splitlines()[-20:])
        done = [json.loads(line) for line in (out / DONE).read_text().splitlines()] if (out / DONE).exists() else []
        return _Runner(_finished(job, out, done), {job[d["index"]].key: d["cpu_s"] for d in done}, cpu_s, wall_s,
                       f"runner exit {proc.returncode}:\n{tail}\n",
                       {job[d["index"]].key: d.get("wall_s", 0.0) for d in done})


def _wait(proc: subprocess.Popen[bytes], done: Path, stall_s: float) -> float:
    """Wait for a runner, stopping it when it finishes nothing for ``stall_s``; its CPU seconds (user+sys)."""
    seen, since = -1, time.monotonic()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if not pid:
            size = done.stat().st_size if done.exists() else 0
            if size != seen:
                seen, since = size, time.monotonic()
            elif time.monotonic() - since > stall_s:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
            return usage.ru_utime + usage.ru_stime
        time.sleep(_POLL_S)


def _finished(job: list[Grading], out: Path, done: list[dict]) -> dict[str, GradeReport]:
    """The reports of the gradings the runner finished with pytest exit status 0 or 1 and some results."""
    reports = {}
    for entry in done:
        results = read_results(out / f"{entry['index']}.jsonl")
        if entry["exit"] in (0, 1) and results:
            reports[job[entry["index"]].key] = GradeReport(entry["target"], tuple(failures.gate_all(results)))
    return reports


# ---- the runner: one child process, many targets -------------------------------------------------------

DONE = "done.jsonl"
_TESTS = REPO_ROOT / "tests"
_TRUSTED = (_TESTS, REPO_ROOT / "kernels_ref")
_RUNNER_MODULES = ("__main__", "grader.authoring", "grader.authoring.corpus", "grader.authoring.known")


def main(out: Path) -> int:
    """Grade the gradings of ``out``/spec.json in order; a line in ``out``/done.jsonl after each."""
    job = [Grading.from_json(d) for d in json.loads((out / "spec.json").read_text())]
    files = _TestFiles(out)
    previous: Path | None = None
    for index, g in enumerate(job):
        cpu, wall = _cpu_with_children(), time.monotonic()
        paths = files.of(g.unit, g.exercises)
        if index == 0:
            _freeze_imports()
        with tempfile.TemporaryDirectory(prefix="dripstone-known-") as tmp:
            target = g.build(Path(tmp)).resolve()
            exit_code = _grade_here(g, target, paths, out / f"{index}.jsonl", previous)
            previous = target
        line = {"index": index, "exit": exit_code, "target": display_path(target),
                "cpu_s": round(_cpu_with_children() - cpu, 3), "wall_s": round(time.monotonic() - wall, 3)}
        with (out / DONE).open("a") as f:
            f.write(json.dumps(line) + "\n")
    return 0


def _cpu_with_children() -> float:
    """CPU seconds (user+sys) of this runner and of its children reaped so far (launches, ranks, compilers)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _grade_here(g: Grading, target: Path, paths: list[Path], report: Path, previous: Path | None) -> int:
    """``pytest.main`` on ``target`` as api.grade runs it, after forgetting the previous target; its exit status."""
    import pytest
    from hypothesis import settings

    from grader.judge.plugin import VERDICT_PROFILE

    _forget(previous)
    # a known-wrong target: its verdict only, so no shrinking (api.grade shrinks; status and score are the same)
    settings.load_profile(VERDICT_PROFILE if g.known and g.known.parent.name == "known_wrong" else "grading")
    print(f"==== {g.key}: {' '.join(display_path(p) for p in paths)}", flush=True)
    try:
        return int(pytest.main(command.pytest_args(REPO_ROOT, paths, target=target, report=report,
                                                   exercises=g.exercises, call_timeout=0)))
    except Exception as exc:  # graded again by api.grade, which reports it
        print(f"pytest.main raised {type(exc).__name__}: {exc}", flush=True)
        return -1


class _TestFiles:
    """The test files of a unit that hold given exercises, from the unit's manifest (collected once)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: dict[str, dict[str, set[str]]] = {}

    def of(self, unit: str, exercises: Sequence[str]) -> list[Path]:
        if unit not in self.files:
            self.files[unit] = self._collect(unit)
        by_exercise = self.files[unit]
        chosen = sorted({f for e in exercises for f in by_exercise.get(e, ())})
        if not exercises or not chosen:  # all of them; an unknown exercise fails as api.grade fails
            return command.unit_paths(REPO_ROOT, [unit])
        return [REPO_ROOT / f for f in chosen]

    def _collect(self, unit: str) -> dict[str, set[str]]:
        import pytest

        manifest = self.out / f"manifest-{unit}.json"
        pytest.main(command.pytest_args(REPO_ROOT, command.unit_paths(REPO_ROOT, [unit]), manifest=manifest,
                                        collect_only=True))
        found: dict[str, set[str]] = {}
        for test in json.loads(manifest.read_text()) if manifest.exists() else []:
            found.setdefault(test["exercise"], set()).add(test["nodeid"].split("::")[0])
        return found


def _forget(previous: Path | None) -> None:
    """Drop what grading the previous target loaded: its modules, test and reference modules, cached constants."""

    loader._CACHE.clear()  # keyed by path: every known target has its own, solutions/ is graded once a runner
    roots = [*_TRUSTED, *([previous] if previous is not None else [])]
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and any(Path(path).is_relative_to(r) for r in roots):
            del sys.modules[name]
    _reset_hypothesis_constants()


def _freeze_imports() -> None:
    """Leave what collecting the unit imported (torch, triton, numba, hypothesis: a big heap) out of every later
    garbage collection: pytest collects several times per run, and each pass over that heap costs about a second."""
    _forget(None)
    gc.collect()
    gc.freeze()


def _reset_hypothesis_constants() -> None:
    """Hypothesis draws some examples from the constants of loaded local modules, collected once per module:
    start each target from an empty pool, as a fresh process does, without the runner's own modules."""
    from hypothesis.internal.conjecture import providers

    for kind in ("integer", "float", "bytes", "string"):
        providers._local_constants.set_for_type(kind).clear()
    providers._seen_modules.clear()
    providers._seen_modules.update(id(sys.modules[m]) for m in _RUNNER_MODULES if m in sys.modules)
    providers._sys_modules_len = None
    providers.CONSTANTS_CACHE.cache.clear()


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
