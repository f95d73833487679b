"""Grade a folder of untrusted submissions: one sandboxed run per student, resumable, scores decided here.

``SUBMISSIONS/`` holds one entry per student: a folder laid out like ``exercises/``, or a .zip /
.tar.gz of one (:mod:`grader.instructor.unpack`). ``OUT/`` receives::

    OUT/<student>/results.json    Gradescope schema (grader.core.results.gradescope)
    OUT/<student>/log.txt         the grading run's output, capped
    OUT/manifest.json             the graded tests, collected here without any learner code
    OUT/done.jsonl                one line per finished student: the resume ledger (its ``key``: what was graded)
    OUT/grades.csv                one row per student, one column per unit, the total
    OUT/summary.json              isolation used, what is missing, every student's problems

The trusted side decides: the manifest (test ids, exercise, tier, points) comes from a collection
run on the grader's own copy; each student's reported results are checked against it, and a test
that is missing, reported twice, unknown, or reported with other points than the manifest's
scores 0 with the reason (:func:`validate`).

Resume after ``kill -9``: a student is finished once its line is in ``done.jsonl``; results.json is
written atomically (temporary file, fsync, rename) *before* that line is appended, so a kill leaves
either no trace (graded again) or a complete result (not graded again); grades.csv is rebuilt from
the ledger, one row per student.

Stale grades: each ledger line records its ``key``, what was graded: the submission's digest (every file's path and
bytes, or the archive's bytes), the units, the exercises, the tests' digest (the units' grading tests as staged,
without corpora) and ``--max-examples``. A student whose key differs from this run's is graded again and the reason is
said (summary.json ``regraded``); ``--regrade NAME`` grades named students again, ``--force`` everyone. The last line
of a student wins.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import fcntl
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from grader.core import command
from grader.core.results import GradeReport, Status, TestResult, Tier, gradescope
from grader.core.target import REPO_ROOT, tree_digest
from grader.instructor import class_report, sandbox, unpack
from grader.tools import host

LOG_CAP_BYTES = 1 << 20
SLOTS_DIR = Path("/tmp/dripstone-slots")
MAX_SLOTS = 64


class Backend(StrEnum):
    LOCAL = "local"
    RAY = "ray"


class BatchError(RuntimeError):
    """The batch could not run (bad arguments, no sandbox): no student was graded."""


@dataclass(frozen=True)
class Student:
    name: str  # the entry's name in SUBMISSIONS (untrusted: any bytes; OUT/ uses out_folder(name))
    source: Path  # a folder, or an archive
    refusal: str = ""  # why it is graded 0 without being run (a link out of SUBMISSIONS)


@dataclass(frozen=True)
class Graded:
    """One student's outcome as the trusted side decided it."""

    student: str
    score: float
    max_score: float
    units: dict[str, float]
    problems: tuple[str, ...] = ()
    isolation: str = ""
    wall_s: float = 0.0
    gpu: str | None = None  # the GPU it was graded on (batch --gpus), as CUDA_VISIBLE_DEVICES named it
    key: dict[str, object] = field(default_factory=dict)  # what was graded (:func:`grading_key`)
    exercises: dict[str, float] = field(default_factory=dict)  # "<unit>:<exercise>" → score
    submitted: float | None = None  # the submission's time (newest file's mtime), for --due


@dataclass(frozen=True)
class StudentOutput:
    """What a job hands back to the driver, which alone writes into OUT/."""

    graded: Graded
    results_json: dict[str, object]
    log: str


@dataclass(frozen=True)
class BatchOptions:
    submissions: Path | None  # None with nbgrader: the submissions are read from COURSE/submitted/
    out: Path
    jobs: int = 1
    units: tuple[str, ...] = ()
    exercises: tuple[str, ...] = ()  # only these exercises (function names); all by default
    backend: Backend = Backend.LOCAL
    address: str | None = None
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    nbgrader: Path | None = None  # an nbgrader course: grade COURSE/submitted/<student>/<assignment>/
    assignment: str | None = None
    regrade: tuple[str, ...] = ()  # students graded again whatever the ledger says
    force: bool = False  # every student graded again
    late: class_report.Late | None = None  # --due and --late-penalty (grader/instructor/class_report.py)


@dataclass(frozen=True)
class BatchReport:
    out: Path
    graded: tuple[Graded, ...]
    resumed: int
    runtime: str
    units: tuple[str, ...]
    skipped: tuple[str, ...] = ()  # entries of SUBMISSIONS that are no submission, each with the reason
    regraded: tuple[tuple[str, str], ...] = ()  # (student, why) for each student in the ledger graded again

    def without_units(self) -> list[str]:
        """Students in whose submission no unit folder was found (a layout problem, not a score)."""
        return [g.student for g in self.graded if any(p.startswith(NO_UNIT) for p in g.problems)]

    def layout_warning(self) -> str | None:
        """A loud warning when most students have no unit at all: the batch was likely pointed at the wrong
        folder (nbgrader's course root, a folder of folders), and its zeros mean nothing."""
        missing = self.without_units()
        if not self.graded or len(missing) * 2 <= len(self.graded):
            return None
        return (f"{len(missing)} of {len(self.graded)} students have no unit folder in their submission: their 0 is "
                "a layout problem, not a score. Point batch at a folder with one entry per student, each laid out "
                "like exercises/ (units at the top, or one or two folders down); for an nbgrader course use "
                "`batch --nbgrader COURSE --assignment A`. See each student's problems in grades.csv.")


# ---- discovery ------------------------------------------------------------------------------------

NO_UNIT = "no unit folder found"
JUNK = frozenset({".DS_Store", "__MACOSX", ".git", ".ipynb_checkpoints", "Thumbs.db"})
RESERVED = frozenset({"grades.csv", "summary.json", "manifest.json", "done.jsonl"})  # OUT/'s own files
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,79}")


def display(name: str) -> str:
    """A student's name as text: undecodable bytes of the folder name written as \\xNN (CSV, terminal)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def out_folder(name: str) -> str:
    """The folder under OUT/ of a student: the name itself where it is plain (letters, digits, ``_.@+-``, at
    most 80, no leading dot, not one of OUT's own files), else a sanitized name and a digest of the exact
    name, so no two students share a folder and no name reaches a path unsanitized."""
    if SAFE_NAME.fullmatch(name) and name.lower() not in RESERVED:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    plain = re.sub(r"[^A-Za-z0-9_.@+-]", "_", name).lstrip("._")[:60] or "student"
    return f"{plain}-{digest}"


def _entry(entry: Path, root: Path) -> tuple[str | None, str]:
    """(the student's name, why it is refused) for one entry of SUBMISSIONS; name None: not a submission."""
    refusal = ""
    if entry.is_symlink():
        target = entry.resolve()
        if not target.is_relative_to(root) or target == root:
            refusal = (f"{display(entry.name)} is a link to {display(str(target))}, outside the submissions folder: "
                       "links are followed only inside it; copy the submission in instead")
    if unpack.is_archive(entry):
        return unpack.archive_stem(entry), refusal
    if entry.is_dir() or refusal:
        return entry.name.removesuffix("/"), refusal
    return None, ""


def discover_entries(submissions: Path) -> tuple[list[Student], list[str]]:
    """One student per folder or archive (a link is followed where it stays inside ``submissions``, else
    that student is refused with the reason), and each entry that is no submission, with the reason.
    A name given twice (alice/ and alice.zip) is an error."""
    if not submissions.is_dir():
        raise BatchError(f"{submissions} is not a folder of submissions: pass a folder holding one folder, .zip, "
                         ".tar.gz or .tgz per student")
    root = submissions.resolve()
    students: dict[str, Student] = {}
    skipped: list[str] = []
    for entry in sorted(submissions.iterdir()):
        if entry.name in JUNK:
            continue
        name, refusal = _entry(entry, root)
        if name is None:
            skipped.append(f"{display(entry.name)}: not a folder, .zip, .tar.gz or .tgz (ignored; a student's "
                           "submission is one of those)")
            continue
        if name in students:
            raise BatchError(f"two submissions for {display(name)!r}: {display(students[name].source.name)} and "
                             f"{display(entry.name)}: keep one of them in {submissions}")
        students[name] = Student(name, entry, refusal)
    return list(students.values()), skipped


def discover(submissions: Path) -> list[Student]:
    """The students of :func:`discover_entries`."""
    return discover_entries(submissions)[0]


# ---- the trusted side: manifest and validation ------------------------------------------------------


def collect_manifest(
    repo: Path, units: Sequence[str], exercises: Sequence[str], dest: Path, python: Path | None = None
) -> list[dict[str, object]]:
    """The graded tests, collected on the grader's copy (``repo``, readable by every uid) into ``dest``; no learner
    code runs. Collected by the sandbox's Python as the uid the sandbox probe checks with: the same interpreter and
    libraries as every judge, and the proof that the sandbox can import them (the probe then skips that check)."""
    python = python or sandbox.sandbox_python()
    with tempfile.TemporaryDirectory(prefix="dripstone-manifest-") as tmp:
        work = Path(tmp)
        cmd = sandbox.as_probe_uid(command.pytest_command(python, repo, command.unit_paths(repo, units),
                                                          manifest=work / "manifest.json", exercises=exercises,
                                                          collect_only=True))
        if cmd[0] == "setpriv":
            os.chown(work, host.PROBE_UID, host.PROBE_UID)
        env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1", "HOME": tmp, "TMPDIR": tmp,
               "HYPOTHESIS_STORAGE_DIRECTORY": str(work / "hypothesis")}
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not (work / "manifest.json").exists():
            who = f" as uid {host.PROBE_UID}" if cmd[0] == "setpriv" else ""
            raise BatchError(
                f"collecting the grading tests with {python}{who} failed (every student's judge runs that Python: "
                f"run `make sandbox-env`, and keep its venv world-readable):\n"
                f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            )
        text = (work / "manifest.json").read_text()
    dest.write_text(text)
    return json.loads(text)


def _parse_lines(text: str) -> tuple[list[TestResult], list[str]]:
    results, problems = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            results.append(TestResult.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError) as exc:
            problems.append(f"result line {n} rejected (not written by the grader): {type(exc).__name__}")
    return results, problems


def _check(expected: dict[str, object], got: TestResult) -> str | None:
    for key in ("unit", "exercise", "tier", "points"):
        if str(getattr(got, key)) != str(expected[key]):
            return f"{key} {getattr(got, key)!r} differs from the grader's {expected[key]!r}"
    if not 0.0 <= got.score <= got.points:
        return f"score {got.score} outside [0, {got.points}]"
    if got.status is not Status.PASSED and got.score:
        return f"status {got.status} with a non-zero score"
    return None


def _zero(expected: dict[str, object], message: str) -> TestResult:
    return TestResult(
        nodeid=str(expected["nodeid"]),
        unit=str(expected["unit"]),
        exercise=str(expected["exercise"]),
        tier=Tier(str(expected["tier"])),
        points=float(expected["points"]),  # type: ignore[arg-type]
        status=Status.FAILED,
        score=0.0,
        message=message,
    )


def validate(manifest: list[dict[str, object]], text: str, ended: str) -> tuple[list[TestResult], list[str]]:
    """Exactly one well-formed result per manifest test; anything else scores 0 and is named."""
    reported, problems = _parse_lines(text)
    by_id: dict[str, list[TestResult]] = {}
    for r in reported:
        by_id.setdefault(r.nodeid, []).append(r)
    known = {str(e["nodeid"]) for e in manifest}
    problems += [f"unknown test reported: {nid}" for nid in by_id if nid not in known]
    out = []
    for e in manifest:
        got = by_id.get(str(e["nodeid"]), [])
        if not got:
            out.append(_zero(e, f"no result: the grading run ended before this test ({ended})"))
            continue
        bad = "reported more than once" if len(got) > 1 else _check(e, got[0])
        if bad:
            problems.append(f"{e['nodeid']}: result rejected, {bad}")
            out.append(_zero(e, f"result rejected by the grader: {bad}"))
        else:
            out.append(got[0])
    missing = sum(1 for r in out if r.message.startswith("no result"))
    if missing:
        problems.append(f"{missing} test(s) without a result ({ended})")
    return out, problems


# ---- one student ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _first_free(names: Sequence[str]) -> Iterator[str | None]:
    """The first of ``names`` whose lock under SLOTS_DIR nobody holds, held for the block (across
    threads, processes and batches on this machine); None when every one is held."""
    SLOTS_DIR.mkdir(mode=0o700, exist_ok=True)
    for name in names:
        fd = os.open(SLOTS_DIR / f"{name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield name
        finally:
            os.close(fd)
        return
    yield None


@contextlib.contextmanager
def job_slot() -> Iterator[int]:
    """A slot (and so a uid) no other job on this machine holds, across threads, processes, batches."""
    with _first_free([str(slot) for slot in range(MAX_SLOTS)]) as slot:
        if slot is None:
            raise BatchError(f"all {MAX_SLOTS} job slots are busy")
        yield int(slot)


GPU_WAIT_S = 0.5


def visible_gpus(dev: Path = Path("/dev")) -> list[str]:
    """The GPUs jobs may use: CUDA_VISIBLE_DEVICES where set (Ray sets it per task), else every
    ``/dev/nvidia<N>``. Read without initializing CUDA."""
    given = os.environ.get("CUDA_VISIBLE_DEVICES")
    if given is not None:
        return [g.strip() for g in given.split(",") if g.strip() and g.strip() != "-1"]
    return [str(n) for n in host.gpu_indices(dev)]


@contextlib.contextmanager
def gpu_lease(limits: sandbox.Limits) -> Iterator[str | None]:
    """One visible GPU for this job alone (a lock per GPU, across threads, processes and batches on
    this machine), waited for while every one is busy: timings on a shared GPU are not comparable.
    None without ``--gpus``."""
    if not limits.gpu:
        yield None
        return
    gpus = visible_gpus()
    if not gpus:
        raise BatchError("--gpus: no GPU is visible here (no /dev/nvidia<N>, or CUDA_VISIBLE_DEVICES is empty)")
    locks = {f"gpu-{re.sub(r'[^A-Za-z0-9-]', '_', gpu)}": gpu for gpu in gpus}
    while True:
        with _first_free(list(locks)) as held:
            if held is not None:
                yield locks[held]
                return
        time.sleep(GPU_WAIT_S)


def _links(folder: Path) -> list[str]:
    """What the staged copy will lack: links, which are never followed inside a submission."""
    return [f"{display(str(p.relative_to(folder)))} is a symbolic link: links are refused (only regular files are "
            "graded); submit the file itself" for p in sorted(folder.rglob("*")) if p.is_symlink()][:20]


def _stage_submission(student: Student, work: Path, units: Sequence[str] = ()) -> tuple[Path, list[str]]:
    """The student's copy of their unit folders (folders and archives: one rule, unpack.submission_root),
    and the notes about what was left out of it. UnsafeArchive, LayoutError or OSError: refused."""
    source = unpack.unpack(student.source, work / "unpacked") if unpack.is_archive(student.source) else student.source
    try:
        folder = unpack.submission_root(source, units)
    except unpack.LayoutError as exc:
        raise unpack.LayoutError(f"{NO_UNIT}: {exc}") if "no unit folder" in str(exc) else exc from None
    return sandbox.stage_target(folder, work / "target"), _links(folder)


def _ended(outcome: sandbox.Outcome, limits: sandbox.Limits) -> str:
    if outcome.timed_out:
        return f"stopped after the {limits.wall_s:g} s wall-clock limit"
    if outcome.returncode < 0:
        return f"the grading process was killed by signal {-outcome.returncode}"
    return f"pytest exit status {outcome.returncode}"


def grade_student(student: Student, plan: Plan, limits: sandbox.Limits) -> StudentOutput:
    """Stage, run in the sandbox, validate against the manifest. Writes nothing outside its scratch.

    ``plan.snapshot`` is the batch's copy of the grader and tests (every student gets the same
    tests, even if the repository changes during the batch); each student gets a fresh copy of it.
    """
    runtime = plan.runtime
    with tempfile.TemporaryDirectory(prefix="dripstone-job-") as tmp, job_slot() as slot, gpu_lease(limits) as gpu:
        work = Path(tmp)
        work.chmod(0o711)
        notes: list[str] = []
        reason = student.refusal
        if not reason:
            try:
                target, notes = _stage_submission(student, work, plan.units)
            except (unpack.UnsafeArchive, unpack.LayoutError, OSError) as exc:
                reason = str(exc)
        if reason:  # graded as an empty submission: the same tests pending GPU, so the same maximum as everyone
            target = work / "empty"
            target.mkdir()
        repo = sandbox.stage_repo(work / "repo", plan.units, root=plan.snapshot)
        job = sandbox.Job(
            student.name,
            repo,
            target,
            work / "scratch",
            plan.units,
            work / "results.jsonl",
            work / "log.txt",
            slot,
            plan.exercises,
            gpu,
        )
        outcome = sandbox.run(job, runtime, limits)
        results, problems = validate(plan.tests(), job.report.read_text(errors="replace"), _ended(outcome, limits))
        log = _read_capped(job.log)
    if reason:
        return refused(student, plan, reason, results)
    if outcome.timed_out:
        problems.insert(0, f"timed out after {limits.wall_s:g} s")
    return _output(student, results, [*notes, *problems], runtime, outcome.wall_s, log, gpu)


def refused(student: Student, plan: Plan, reason: str, empty: Sequence[TestResult] = ()) -> StudentOutput:
    """A submission that could not be unpacked, found or staged: every test 0, the reason said. ``empty``, an
    empty submission's results in this batch, keeps its tests pending GPU out of the maximum, as they are for
    everyone graded."""
    pending = {r.nodeid for r in empty if r.status is Status.PENDING_GPU}
    message = reason if reason.startswith(NO_UNIT) else f"submission refused: {reason}"
    results = [next(r for r in empty if r.nodeid == e["nodeid"]) if e["nodeid"] in pending else _zero(e, message)
               for e in plan.tests()]
    return _output(student, results, [message], plan.runtime, 0.0, "")


def _read_capped(path: Path) -> str:
    with path.open("rb") as f:
        data = f.read(LOG_CAP_BYTES + 1)
    text = data[:LOG_CAP_BYTES].decode(errors="replace")
    return text + ("\n[log truncated]\n" if len(data) > LOG_CAP_BYTES else "")


def _submission_problems(results: Sequence[TestResult], most: int = 5) -> list[str]:
    """What made a file of the submission unusable (a syntax error, a module or a function missing), once each:
    the instructor's problems column, not only each test's message."""
    found = dict.fromkeys(r.message.split(";")[0] for r in results if r.kind == "submission" and r.message)
    return list(found)[:most]


def _output(
    student: Student,
    results: list[TestResult],
    problems: list[str],
    runtime: sandbox.Runtime,
    wall_s: float,
    log: str,
    gpu: str | None = None,
) -> StudentOutput:
    report = GradeReport(target=display(student.name), results=tuple(results))
    problems = [*problems, *_submission_problems(results)]
    units = {u: sum(r.score for r in rs) for u, rs in report.by_unit().items()}
    exercises: dict[str, float] = {}
    for r in results:
        exercises[f"{r.unit}:{r.exercise}"] = exercises.get(f"{r.unit}:{r.exercise}", 0.0) + r.score
    graded = Graded(student.name, report.score, report.max_score, units, tuple(problems), runtime.describe(), wall_s,
                    gpu, exercises=exercises, submitted=submitted_at(student.source))
    payload = gradescope(report)
    if problems:
        payload["output"] = "\n".join([str(payload.get("output", "")), *problems]).strip()
    return StudentOutput(graded, payload, log)


# ---- the driver ------------------------------------------------------------------------------------------


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_ledger(out: Path) -> dict[str, Graded]:
    """Finished students, each by its last line; a torn last line (killed while appending) is ignored and regraded."""
    path = out / "done.jsonl"
    done: dict[str, Graded] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        with contextlib.suppress(ValueError, TypeError):
            d = json.loads(line)
            d["problems"] = tuple(d["problems"])
            done[d["student"]] = Graded(**d)
    return done


def submitted_at(source: Path) -> float | None:
    """When a submission was handed in, as its files say: the newest mtime of a folder's files (links not
    followed), an archive's own mtime; None if it cannot be read."""
    try:
        if not source.is_dir():
            return source.stat().st_mtime
        return max((p.lstat().st_mtime for p in source.rglob("*")), default=source.stat().st_mtime)
    except OSError:
        return None


def submission_digest(source: Path) -> str:
    """SHA-256 of a submission: every file's path and bytes under a folder (links as their target text; caches
    left out), or the archive's bytes."""
    if not source.is_dir():
        return hashlib.sha256(source.read_bytes()).hexdigest()
    return tree_digest(source, PYCACHE)


PYCACHE = re.compile(r"(^|/)__pycache__/|\.pyc$")
STAGED_OUT = re.compile(r"(^|/)(known_wrong|known_right|__pycache__|\.hypothesis)(/|$)|\.pyc$")


def tests_digest(tests: Path, units: Sequence[str]) -> str:
    """SHA-256 of the units' grading tests as a batch stages them (corpora and caches left out)."""
    return hashlib.sha256("".join(f"{u}:{tree_digest(tests / u, STAGED_OUT)};" for u in units).encode()).hexdigest()


def grading_key(student: Student, units: Sequence[str], options: BatchOptions, tests: str) -> dict[str, object]:
    """What grading ``student`` in this run means: a ledger line with another key is stale."""
    return {"submission": submission_digest(student.source), "units": list(units),
            "exercises": sorted(options.exercises), "tests": tests, "max_examples": options.limits.max_examples}


def stale(graded: Graded | None, key: dict[str, object], *, named: bool, force: bool) -> str | None:
    """Why a student must be graded (again), or None where the ledger's grade stands."""
    if graded is None:
        return "not graded yet"
    if force or named:
        return "--force" if force else "--regrade"
    if not graded.key:
        return "graded before the ledger recorded what was graded"
    what = {"submission": "its submission changed",
            "units": f"other units (was {', '.join(map(str, graded.key.get('units', [])))})",
            "exercises": "other exercises", "tests": "the tests changed", "max_examples": "another --max-examples"}
    return next((why for k, why in what.items() if graded.key.get(k) != key.get(k)), None)


def record(out: Path, output: StudentOutput) -> None:
    """results.json and the log first (atomically), then the ledger line: the student is finished."""
    folder = out / out_folder(output.graded.student)
    folder.mkdir(exist_ok=True)
    _write_atomic(folder / "log.txt", output.log)
    _write_atomic(folder / "results.json", json.dumps(output.results_json, indent=2, ensure_ascii=False) + "\n")
    ledger = out / "done.jsonl"
    with ledger.open("a+") as f:
        f.seek(0, os.SEEK_END)
        if f.tell():
            f.seek(f.tell() - 1)
            torn = f.read(1) != "\n"
            f.seek(0, os.SEEK_END)
            if torn:
                f.write("\n")
        f.write(json.dumps(asdict(output.graded)) + "\n")
        f.flush()
        os.fsync(f.fileno())


def write_grades_csv(out: Path, graded: Sequence[Graded], units: Sequence[str], exercises: Sequence[str] = (),
                     late: class_report.Late | None = None) -> None:
    """One row per student (csv module: names with commas, quotes or newlines stay one field): a column per unit,
    then per exercise (``<unit>:<exercise>``), the total, with --due its submission time, days late and the total
    after the late rule, the problems, its folder under OUT/ last."""
    dated = ["submitted", "days_late", "total_after_late"] if late is not None else []
    with (out / ".grades.csv.tmp").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *units, *exercises, "total", "max_score", *dated, "problems", "folder"])
        for g in sorted(graded, key=lambda g: g.student):
            when = [] if late is None else [
                time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(g.submitted)) if g.submitted else "",
                late.days(g.submitted), late.total_after(g.score, g.submitted)]
            w.writerow(
                [
                    display(g.student),
                    *(round(g.units.get(u, 0.0), 4) for u in units),
                    *(round(g.exercises.get(e, 0.0), 4) for e in exercises),
                    round(g.score, 4),
                    g.max_score,
                    *when,
                    "; ".join(g.problems),
                    out_folder(g.student),
                ]
            )
    os.replace(out / ".grades.csv.tmp", out / "grades.csv")


@dataclass(frozen=True)
class Plan:
    """What every job of a batch shares: the students left, the tests and how to isolate."""

    pending: tuple[Student, ...]
    snapshot: Path
    units: tuple[str, ...]
    exercises: tuple[str, ...]
    manifest: list[dict[str, object]]  # empty while ``collecting``
    runtime: sandbox.Runtime
    collecting: Future[list[dict[str, object]]] | None = None  # local backend: collected while students run

    def tests(self) -> list[dict[str, object]]:
        """The manifest; where it is still being collected, once it is (a failed collection raises here)."""
        return self.collecting.result() if self.collecting is not None else self.manifest


def _collect(options: BatchOptions, units: tuple[str, ...], collected: Path) -> list[dict[str, object]]:
    from grader import api

    manifest = collect_manifest(collected, units, options.exercises, options.out / "manifest.json")
    if not manifest:
        raise api.GraderError(f"no grading tests in units {units}")
    return manifest


def _start(
    options: BatchOptions, units: tuple[str, ...], tmp: Path, bg: ThreadPoolExecutor
) -> tuple[Future[Path], Future[list[dict[str, object]]]]:
    """(the snapshot every judge copies, the manifest), both made in ``bg``: the snapshot holds what every judge
    would otherwise build (:func:`sandbox.prebuild`); the tests are collected from the same staged files. Nothing
    of a student is needed for either, so students are graded as soon as the snapshot is there, and each is
    validated once the manifest is (the collection, ~2.5 s of CPU, runs beside the first students)."""
    collected = sandbox.stage_repo(tmp / "collected", units, prebuilt=tmp / "nothing")
    manifest = bg.submit(_collect, options, units, collected)

    def snapshot() -> Path:
        sandbox.prebuild(tmp / "prebuilt", units)
        return sandbox.stage_repo(tmp / "snapshot", units, root=collected, prebuilt=tmp / "prebuilt")

    return bg.submit(snapshot), manifest


Runner = Callable[[Plan, BatchOptions, Callable[[StudentOutput], None]], None]


def run_local(plan: Plan, options: BatchOptions, done: Callable[[StudentOutput], None]) -> None:
    """``--jobs`` students at a time in threads; each thread waits on its sandboxed process. Where the manifest
    is still being collected (``plan.collecting``), a failed collection stops the batch at once: the students
    running finish, no other starts, nothing is recorded."""
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(grade_student, s, plan, options.limits) for s in plan.pending]
        try:
            for future in as_completed([*futures, *filter(None, [plan.collecting])]):
                if future is plan.collecting:
                    future.result()
                else:
                    done(future.result())
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def run_batch(options: BatchOptions, progress: Callable[[int, int, str], None] = lambda *_: None, *,
              runner: Runner | None = None) -> BatchReport:
    """Grade every unfinished student of ``options.submissions`` (or of an nbgrader course) into ``options.out``.

    ``runner`` grades the pending students (:func:`run_local` by default); the Ray backend's is
    grader/instructor/batch_ray.py's, which builds on this module (``batch_ray.run_batch``)."""
    runner = runner or run_local
    if options.backend is Backend.RAY and runner is run_local:
        raise BatchError("backend ray: grade through grader.instructor.batch_ray.run_batch "
                         "(`python -m grader batch --backend ray` does)")
    if options.nbgrader is None:
        if options.submissions is None:
            raise BatchError("no submissions: pass a folder of submissions, or --nbgrader COURSE --assignment A")
        return _run_batch(options, options.submissions, progress, runner)
    from grader.instructor import nbgrader_submissions

    if not options.assignment:
        raise BatchError(f"--nbgrader {options.nbgrader}: pass --assignment A too (the assignment to grade)")
    with tempfile.TemporaryDirectory(prefix="dripstone-nbgrader-") as tmp:
        try:
            folder = nbgrader_submissions.extract(options.nbgrader, options.assignment, Path(tmp) / "submissions")
        except nbgrader_submissions.CourseError as exc:
            raise BatchError(str(exc)) from None
        return _run_batch(options, folder, progress, runner)


def _run_batch(options: BatchOptions, submissions: Path, progress: Callable[[int, int, str], None],
               runner: Runner) -> BatchReport:
    from grader import api

    students, skipped = discover_entries(submissions)
    units = tuple(api.resolve_units(options.units))
    if options.limits.gpu and options.backend is Backend.LOCAL and not visible_gpus():
        raise BatchError("--gpus: no GPU is visible here (no /dev/nvidia<N>, or CUDA_VISIBLE_DEVICES is empty); "
                         "grade on a GPU machine, or drop --gpus (the gpu_perf tier is then pending GPU)")
    options.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dripstone-batch-") as tmp, ThreadPoolExecutor(max_workers=2) as bg:
        Path(tmp).chmod(0o711)  # the staged grader is collected by the sandbox's uid (not listed)
        snapshot, manifest = _start(options, units, Path(tmp), bg)  # made while the sandbox is probed
        runtime = sandbox.probe(imports=False)  # the collection imports what the judges import, as the probe's uid
        finished = read_ledger(options.out)
        unknown = sorted(set(options.regrade) - {s.name for s in students})
        if unknown:
            raise BatchError(f"--regrade {', '.join(map(display, unknown))}: no such submission in {submissions} "
                             "(give the entry's name as in grades.csv's student column)")
        digest = tests_digest(REPO_ROOT / "tests", units)
        keys = {s.name: grading_key(s, units, options, digest) for s in students}
        why = {s.name: stale(finished.get(s.name), keys[s.name], named=s.name in options.regrade,
                             force=options.force) for s in students}
        pending = [s for s in students if why[s.name] is not None]
        regraded = tuple((s.name, str(why[s.name])) for s in pending if s.name in finished)
        progress(0, len(pending), runtime.describe())

        def done(output: StudentOutput) -> None:
            output = dataclasses.replace(output, graded=dataclasses.replace(output.graded,
                                                                            key=keys[output.graded.student]))
            record(options.out, output)
            finished[output.graded.student] = output.graded
            progress(1, len(pending), display(output.graded.student))

        if runner is run_local:
            plan = Plan(tuple(pending), snapshot.result(), units, options.exercises, [], runtime, collecting=manifest)
        else:  # the manifest travels with each task
            plan = Plan(tuple(pending), snapshot.result(), units, options.exercises, manifest.result(), runtime)
        runner(plan, options, done)
        tests = manifest.result()
    graded = [finished[s.name] for s in students if s.name in finished]
    exercises = list(class_report.exercise_points(tests))
    write_grades_csv(options.out, graded, units, exercises, options.late)
    extra = class_report.write(options.out, graded, tests, folder_of=out_folder, display=display, late=options.late)
    summary = {
        "runtime": runtime.describe(),
        "isolation": str(runtime.isolation),
        "missing": list(runtime.missing),
        "units": list(units),
        "students": len(graded),
        "resumed": len(students) - len(pending),
        "regraded": {display(name): reason for name, reason in regraded},
        "skipped": skipped,
        "problems": {display(g.student): list(g.problems) for g in graded if g.problems},
        **extra,
    }
    report = BatchReport(options.out, tuple(graded), len(students) - len(pending), runtime.describe(), units,
                         tuple(skipped), regraded)
    summary["without_units"] = [display(s) for s in report.without_units()]
    summary["warning"] = report.layout_warning()
    _write_atomic(options.out / "summary.json", json.dumps(summary, indent=2) + "\n")
    return report


# ---- terminal ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def progress_bar(console: object) -> Iterator[Callable[[int, int, str], None]]:
    """A rich progress bar fed by :func:`run_batch`'s progress callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:  # type: ignore[arg-type]
        task = bar.add_task("grading", total=None)

        def update(advance: int, total: int, what: str) -> None:
            if advance == 0:
                bar.console.print(f"[bold]{total}[/bold] student(s) to grade; {what}")
            bar.update(task, total=total, advance=advance, description=f"graded {what}" if advance else "grading")

        yield update


def print_summary(report: BatchReport, console: object) -> None:
    """Scores per student and every problem found (what was tampered with, timed out, refused)."""
    from rich.table import Table

    table = Table(title=f"batch: {len(report.graded)} students ({report.resumed} resumed) · {report.runtime}")
    for col in ("student", *report.units, "total", "problems"):
        table.add_column(col)
    for g in sorted(report.graded, key=lambda g: g.student):
        table.add_row(
            display(g.student),
            *(f"{g.units.get(u, 0):g}" for u in report.units),
            f"{g.score:g}/{g.max_score:g}",
            "; ".join(g.problems)[:200],
        )
    console.print(table)  # type: ignore[attr-defined]
    console.print(
        f"wrote {report.out}/grades.csv, {report.out}/summary.json, {report.out}/summary.html (the class per "  # type: ignore[attr-defined]
        f"exercise), {report.out}/junit.xml, {report.out}/feedback/ (to hand out), "
        f"{report.out}/<student>/results.json and log.txt"
    )
    for line in report.skipped:
        console.print(f"[yellow]not graded:[/yellow] {line}")  # type: ignore[attr-defined]
    for name, why in report.regraded:
        console.print(f"graded again: {display(name)} ({why})")  # type: ignore[attr-defined]
    warning = report.layout_warning()
    if warning:
        console.print(f"[bold red]WARNING: {warning}[/bold red]")  # type: ignore[attr-defined]
