"""pytest plugin: points and tiers on every grading test, outcomes classified and recorded."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before any @triton.jit runs: it reads this when it decorates
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")  # numba.cuda exercises run simulated (grader/instrument/cuda.py)

import dataclasses
import difflib
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from grader.core import failures, target, timeout
from grader.core.command import CASE_OPTION, EXERCISE_OPTION, MANIFEST_OPTION, REPORT_OPTION, TARGET_OPTION
from grader.core.results import Status, TestResult, Tier
from grader.instrument import cuda, device, worker
from grader.judge import audit, harness, perf
from grader.judge.marks import MARK as GRADE_MARK
from grader.judge.marks import MARK_HELP, CudaKernel

TARGET_HELP = "folder laid out like exercises/ to grade (default: exercises/)"
EXERCISE_HELP = "grade only tests of this exercise (function name); repeatable"
REPORT_HELP = "write one JSON result per graded test to this file (or fd:N, an open descriptor)"
MANIFEST_HELP = ("write the graded tests (nodeid, unit, exercise, tier, points, hint, validation) collected to this "
                 "JSON file")

_RESULTS = pytest.StashKey[TestResult]()
_CASE = pytest.StashKey[int]()  # the test's number among its exercise's tests (`python -m grader run EX --case N`)
CASE_HELP = "with one --exercise: run only its N-th graded test (1-based, in grading order)"
HYPOTHESIS_FAILURE = re.compile(r"(Falsifying|Failing)( explicit)? (example|test case)")

# Grading is deterministic: same examples every run, no deadline (the interpreter is slow and the
# machine noisy), nothing written into the target. No replay blob: the learner has no test function to
# decorate with it; the grader prints its own replay command (python -m grader run).
settings.register_profile(
    "grading",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=False,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Stop at the first bug and skip the "explain" phase: a stub fails on every input, and hunting
    # for more distinct failures or explaining them cost seconds per test with nothing to show.
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
settings.load_profile("grading")
# The course's self-test needs only the verdict of a known-wrong implementation, not a minimal counterexample:
# the corpus runner (grader/authoring/corpus.py) grades those targets without the shrink phase (same pass/fail,
# seconds less per failing property test).
settings.register_profile(VERDICT_PROFILE := "grading-verdict", settings.get_profile("grading"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the grader's options in one group."""
    group = parser.getgroup("dripstone", "Dripstone grading")
    group.addoption(TARGET_OPTION, default=None, help=TARGET_HELP)
    group.addoption(EXERCISE_OPTION, action="append", default=[], help=EXERCISE_HELP)
    group.addoption(REPORT_OPTION, default=None, help=REPORT_HELP)
    group.addoption(MANIFEST_OPTION, default=None, help=MANIFEST_HELP)
    group.addoption(CASE_OPTION, type=int, default=0, help=CASE_HELP)
    group.addoption(timeout.OPTION, type=float, default=0.0, help=timeout.HELP)
    group.addoption(timeout.HUNG_OPTION, action="append", default=[], help=timeout.HUNG_HELP)


# Every marker, registered here only: @grade, the one marker of grading tests (grader.kit.grade; tiers are
# its argument), and slow, for engine tests that grade whole units.
MARKERS = (MARK_HELP, "slow: engine test that grades whole units (runs in make test, skip with -m 'not slow')")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers, point the loader at the target and wrap the Triton interpreter."""
    timeout.die_with_parent()
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if config.getoption(TARGET_OPTION):
        os.environ[target.TARGET_ENV] = str(Path(config.getoption(TARGET_OPTION)).resolve())
    if os.environ.get(worker.ISOLATE_ENV) == "1":  # the judge asks NVML: it never initializes CUDA
        os.environ.setdefault(device.NVML_CHECK_ENV, "1")
    timeout.configure(config.getoption(timeout.OPTION), on_stuck=lambda text: _record_stuck(config, text),
                      hung=config.getoption(timeout.HUNG_OPTION))
    report = config.getoption(REPORT_OPTION)
    if report and report.startswith("fd:"):
        worker.protect_fd(int(report[3:]))  # batch grading: learner children never hold it
    elif report:
        Path(report).write_text("")
    from grader.instrument import traffic

    traffic.install()


def unit_of(item: pytest.Item) -> str | None:
    """``l23_online_softmax`` for <rootdir>/tests/l23_online_softmax/...; None for the engine's own tests."""
    try:
        parts = Path(item.path).resolve().relative_to(item.config.rootpath.resolve() / "tests").parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] != "grader" else None


def _grading_markers(item: pytest.Item) -> tuple[str, str, float]:
    """(tier, exercise, points) of a grading test, from its ``@grade(...)`` marker; UsageError if wrong."""
    mark = item.get_closest_marker(GRADE_MARK)
    if mark is None:
        raise pytest.UsageError(
            f"grading test {item.nodeid}: needs @grade(<exercise>, <tier>, points=n, hint=...) from grader.kit"
        )
    kw, unit = mark.kwargs, unit_of(item)
    if kw.get("unit") != unit:
        raise pytest.UsageError(
            f"grading test {item.nodeid} grades {kw.get('unit')}'s `{kw.get('exercise')}` but lives in tests/{unit}/: "
            f"declare the exercise with learner({unit!r}, ...)"
        )
    if sum(1 for _ in item.iter_markers(GRADE_MARK)) != 1:
        raise pytest.UsageError(f"grading test {item.nodeid}: exactly one @grade(...) marker, found several")
    return kw["tier"], kw["exercise"], float(kw["points"])


def _hint(item: pytest.Item) -> str:
    mark = item.get_closest_marker(GRADE_MARK)
    return mark.kwargs.get("hint", "") if mark is not None else ""


def _validation(item: pytest.Item) -> bool:
    """A bad-argument test (``@grade(..., validation=True)``): scored only while its exercise's values are right."""
    mark = item.get_closest_marker(GRADE_MARK)
    return bool(mark.kwargs.get("validation", False)) if mark is not None else False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check every grading test carries tier, exercise and points; apply --exercise and --dripstone-case.

    Within each unit, correctness tests run first, validation tests last of them: an exercise's bad-argument
    checks, efficiency and speed are scored only once its values are known to be right (:func:`_gate`)."""
    wanted = set(config.getoption(EXERCISE_OPTION))
    _check_exercises_exist(wanted, items)
    _tiers_in_order(items)
    cases = _number_cases(items)
    keep, drop = [], []
    for item in items:
        if unit_of(item) is None:
            keep.append(item)
            continue
        _, exercise, _ = _grading_markers(item)
        chosen = not wanted or exercise in wanted
        if config.getoption(CASE_OPTION):
            chosen = chosen and item.stash[_CASE] == config.getoption(CASE_OPTION)
        (keep if chosen else drop).append(item)
    if config.getoption(CASE_OPTION) and not any(unit_of(i) for i in keep):
        raise pytest.UsageError(f"no case {config.getoption(CASE_OPTION)} of {', '.join(sorted(wanted))}: "
                                f"its cases are 1 to {max(cases.values(), default=0)}")
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    _cap_examples(items)
    if worker.enabled() and not config.getoption("collectonly"):  # batch: before any test's worker is forked
        worker.warm(_learner_files(items))
    if config.getoption(MANIFEST_OPTION):
        _write_manifest(Path(config.getoption(MANIFEST_OPTION)), items)


def _learner_files(items: list[pytest.Item]) -> list[Path]:
    """The learner's files the graded tests call: each test's exercise, as its test module declares it
    (``learner(...)``, ``cuda_kernel(...)``); the unit's folder where the declaration is not found."""
    files: dict[Path, None] = {}
    for item in items:
        unit = unit_of(item)
        if unit is None:
            continue
        exercise, folder = _grading_markers(item)[1], target.target_root() / unit
        modules = {d.module for d in vars(item.module).values()
                   if isinstance(d, harness.LearnerFunction | CudaKernel) and d.unit == unit and d.name == exercise}
        files.update(dict.fromkeys([folder / f"{m}.py" for m in modules] or [folder]))
    return list(files)


MAX_EXAMPLES_ENV = "DRIPSTONE_MAX_EXAMPLES"


def _cap_examples(items: list[pytest.Item]) -> None:
    """$DRIPSTONE_MAX_EXAMPLES (batch grading's ``--max-examples``): no property test draws more examples than
    that, its explicit @example cases still all run. A quicker, weaker grading, the same for every student."""
    cap = os.environ.get(MAX_EXAMPLES_ENV)
    if not cap:
        return
    for item in items:
        fn = getattr(item, "obj", None)
        inner = getattr(fn, "_hypothesis_internal_use_settings", None)
        if inner is not None and inner.max_examples > int(cap):
            fn._hypothesis_internal_use_settings = settings(inner, max_examples=int(cap))


def _check_exercises_exist(wanted: set[str], items: list[pytest.Item]) -> None:
    """UsageError naming the exercises of the collected units (and the closest name) for an --exercise that
    grades nothing: a typo must not read as "0 tests ran"."""
    known: dict[str, list[str]] = {}
    for item in items:
        if unit_of(item) is not None:
            exercise = _grading_markers(item)[1]
            if exercise not in known.setdefault(unit_of(item), []):
                known[unit_of(item)].append(exercise)
    every = [e for exs in known.values() for e in exs]
    for name in sorted(wanted - set(every)):
        close = difflib.get_close_matches(name, every, n=1, cutoff=0.5)
        listing = "; ".join(f"{u}: {', '.join(exs)}" for u, exs in known.items())
        raise pytest.UsageError(f"no exercise {name!r} in the units graded" + (f": did you mean {close[0]!r}?" if close
                                else "") + f" Their exercises: {listing or 'none'}")


def _tiers_in_order(items: list[pytest.Item]) -> None:
    """Reorder in place, stably: within each unit, correctness (validation tests last), efficiency, gpu_perf."""
    order = {t.value: i for i, t in enumerate(Tier)}
    units = {u: i for i, u in enumerate(dict.fromkeys(unit_of(it) for it in items))}

    def key(it: pytest.Item) -> tuple[int, int, bool]:
        return (units[unit_of(it)], order[_grading_markers(it)[0]], _validation(it)) if unit_of(it) else (0, 0, False)

    items.sort(key=key)


def _number_cases(items: list[pytest.Item]) -> dict[tuple[str, str], int]:
    """Number each grading test among its exercise's tests (1, 2, ...) in grading order; the count of each."""
    count: dict[tuple[str, str], int] = {}
    for item in items:
        if unit_of(item) is not None:
            key = (unit_of(item), _grading_markers(item)[1])
            count[key] = count.get(key, 0) + 1
            item.stash[_CASE] = count[key]
    return count


def pytest_collection_finish(session: pytest.Session) -> None:
    """Tell ``grader.api.grade`` how many graded tests will run (``<report>.total``): its progress line."""
    report = session.config.getoption(REPORT_OPTION)
    if report and not report.startswith("fd:") and not session.config.getoption("collectonly"):
        Path(report + ".total").write_text(str(sum(1 for i in session.items if unit_of(i) is not None)))


def _write_manifest(path: Path, items: list[pytest.Item]) -> None:
    graded = []
    for item in items:
        if unit_of(item) is not None:
            tier, exercise, points = _grading_markers(item)
            graded.append({"nodeid": item.nodeid, "unit": unit_of(item), "exercise": exercise,
                           "tier": tier, "points": points, "hint": _hint(item), "case": item.stash.get(_CASE, 0),
                           "validation": _validation(item)})
    path.write_text(json.dumps(graded, indent=1))


_RUNNING: list[pytest.Item] = []  # the test being run, for _record_stuck
_NEXT: list[pytest.Item | None] = [None]  # the test after it


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    _RUNNING[:] = [item]
    _NEXT[:] = [nextitem]


def _shares_worker(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Whether ``nextitem`` runs in ``item``'s worker (batch grading): another parametrized case of the same test
    function, or the next test of the same exercise (tests run in file order: an exercise's tests are adjacent).
    Never across the GPU mode: a worker keeps the mode (compiled or interpreted kernels) it was forked in."""
    if nextitem is None or _is_gpu_perf(item) != _is_gpu_perf(nextitem):
        return False
    name = getattr(item, "originalname", None)
    if name is not None and nextitem.parent is item.parent and getattr(nextitem, "originalname", None) == name:
        return True
    graded = [m.kwargs for m in (item.get_closest_marker(GRADE_MARK), nextitem.get_closest_marker(GRADE_MARK)) if m]
    return len(graded) == 2 and all((g.get("unit"), g.get("exercise")) == (graded[0]["unit"], graded[0]["exercise"])
                                    for g in graded)


def _record_stuck(config: pytest.Config, text: str) -> None:
    """A learner call could not be interrupted (grading/timeout.py): record its test as failed, end the process."""
    path = config.getoption(REPORT_OPTION)
    item = _RUNNING[0] if _RUNNING else None
    if item is not None and unit_of(item) is not None and path and not path.startswith("fd:"):
        tier, exercise, points = _grading_markers(item)
        first, _, rest = text.partition("\n")
        result = TestResult(nodeid=item.nodeid, unit=unit_of(item), exercise=exercise, tier=Tier(tier),
                            points=points, status=Status.FAILED, score=0.0, message=first, detail=rest,
                            validation=_validation(item))
        with open(path, "a") as f:
            f.write(result.to_json() + "\n")
    timeout.exit_stuck(text)


def _is_gpu_perf(item: pytest.Item) -> bool:
    return unit_of(item) is not None and _grading_markers(item)[0] == Tier.GPU_PERF.value


def pytest_runtest_setup(item: pytest.Item) -> None:
    """gpu_perf without a GPU is pending, not failed. Traffic counted, and calls made, before this test are not
    its own."""
    harness.LAST_CALL.clear()
    if unit_of(item) is not None:
        from grader.instrument import traffic

        traffic.finished_counts()
    if _is_gpu_perf(item):
        perf.require_gpu()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Run gpu_perf tests against learner kernels compiled for the GPU, others interpreted; the static audit of an
    audited exercise first, here (the judge in batch grading), whatever runs the learner's code in the test."""
    try:
        mark = item.get_closest_marker(GRADE_MARK)
        if mark is not None and mark.kwargs.get("audit"):
            module, name, kernel = mark.kwargs["audit"]
            audit.check(target.target_root() / mark.kwargs["unit"], module, name, kernel=kernel)
        with device.gpu_mode(_is_gpu_perf(item)):
            return (yield)
    finally:  # batch grading: no learner state outlives the tests of one exercise (they share a worker)
        worker.end_test(keep_worker=_shares_worker(item, _NEXT[0]))


@pytest.fixture
def award(request: pytest.FixtureRequest):
    """``award(fraction, **record)``: partial credit (gpu_perf ratios) and what it was based on."""

    def _award(fraction: float, **record: object) -> None:
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"award fraction must be in [0, 1], got {fraction}")
        request.node.user_properties.append(("dripstone_fraction", fraction))
        request.node.user_properties.append(("dripstone_record", record))

    return _award


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Classify each graded test's outcome (passed, failed, todo, pending GPU, error)."""
    report = yield
    if unit_of(item) is None:
        return report
    if call.when == "call" or (call.when == "setup" and not report.passed):
        result = _gate(item.session, _with_traffic(_classify(item, report, call)))
        if call.when == "call" and (ran_on := cuda.take_executors()):  # .cu kernels: on a GPU or the CPU executor
            result = dataclasses.replace(result, executor=ran_on)
        item.stash[_RESULTS] = result
        item.session.stash.setdefault(_SEEN, []).append(result)
    return report


def _with_traffic(result: TestResult) -> TestResult:
    """An efficiency test's result with what its count_traffic blocks counted (the last few; ``grader report``)."""
    from grader.instrument import traffic

    counted = traffic.finished_counts()
    if not counted or result.tier is not Tier.EFFICIENCY:
        return result
    return dataclasses.replace(result, record={**result.record, "traffic": counted[-4:]})


_SEEN = pytest.StashKey[list[TestResult]]()  # per session: the results so far, for _gate


def _gate(session: pytest.Session, result: TestResult) -> TestResult:
    """No efficiency or gpu_perf points while the exercise's correctness tests fail: counted bytes or a speed
    of wrong values are worth nothing (a NaN softmax reads x once too); no validation points while its other
    correctness tests fail (a function that only raises ValueError refuses every bad argument). The test's own
    verdict is kept when it failed anyway."""
    return failures.gate(session.stash.get(_SEEN, []), result)


def _root_exception(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _learner_frame(exc: BaseException) -> str:
    frame = target.learner_frame(exc)
    if frame is None:
        return ""
    line = frame.lineno  # None where the interpreter knows no line (a signal raised between two)
    return f" ({target.display_path(Path(frame.filename))}" + (f":{line})" if line is not None else ")")


def _classify(item: pytest.Item, report: pytest.TestReport, call: pytest.CallInfo[None]) -> TestResult:
    tier, exercise, points = _grading_markers(item)
    hint = _hint(item)
    props = dict(report.user_properties)
    base = dict(nodeid=item.nodeid, unit=unit_of(item), exercise=exercise, tier=Tier(tier),
                points=points, duration_s=round(report.duration, 3), validation=_validation(item))
    if report.passed and tier == Tier.GPU_PERF and perf.dry_run():  # CPU timings are never a score
        fraction = float(props.get("dripstone_fraction", 1.0))
        return TestResult(**base, status=Status.PENDING_GPU, score=0.0, record=props.get("dripstone_record", {}),
                          message=f"{perf.PENDING_GPU}: dry run on the CPU passed (would award {fraction:.2f}); "
                          "not a score")
    if report.passed:
        fraction = float(props.get("dripstone_fraction", 1.0))
        return TestResult(**base, status=Status.PASSED, score=points * fraction,
                          record=props.get("dripstone_record", {}))
    if report.skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        status = Status.PENDING_GPU if reason.startswith(perf.PENDING_GPU) else Status.ERROR
        return TestResult(**base, status=status, score=0.0, message=reason)
    if call.excinfo is None or call.when != "call":
        text = str(report.longrepr).strip().splitlines()
        return TestResult(**base, status=Status.ERROR, score=0.0,
                          message=f"grader error in {call.when}: {text[-1] if text else '?'}")
    failed = _classify_failure(base, call.excinfo.value, hint, case=item.stash.get(_CASE, 0),
                               inputs=_inputs(item), call=_last_call())
    if failed.status is Status.FAILED:
        printed = failures.trim_output("\n".join(x for x in (report.capstdout, report.capstderr) if x))
        failed = dataclasses.replace(failed, output=printed)
    return failed


def _inputs(item: pytest.Item) -> str:
    """``shape=(8, 1000), dtype=torch.float32`` for a parametrized test: its inputs as the learner can read them."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _last_call(limit: int = 400) -> str:
    """``to_bytes(4.1, 'MB')``: the test's latest call of the learner's code, each argument's repr trimmed."""
    if not harness.LAST_CALL:
        return ""
    name, args, kwargs = harness.LAST_CALL[0]
    shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    shown = [a if len(a) <= limit else a[:limit] + " ...]" for a in shown]
    return f"{name}({', '.join(shown)})"


def replay_command(unit: str, exercise: str, case: int) -> str:
    """The command that runs one graded test again and shows its inputs, values and prints (on the same target:
    ``--target DIR`` unless it is exercises/; in batch grading, as the student runs it in their own clone: the
    sandbox's copy of the submission is no path anyone else has)."""
    root = target.target_root()
    where = "" if root == target.REPO_ROOT / "exercises" or worker.enabled() else \
        f' ARGS="--target {target.display_path(root)}"'
    return f"make run L={unit.split('_')[0]} E={exercise}" + (f" CASE={case}" if case else "") + where


def _classify_failure(base: dict, exc: BaseException, hint: str, *, case: int = 0, inputs: str = "",
                      call: str = "") -> TestResult:
    notes = "\n".join(getattr(exc, "__notes__", []))
    root = _root_exception(exc)
    notes = notes or "\n".join(getattr(root, "__notes__", []))
    notes = failures.drop_replay_advice(notes)
    text = str(root).strip() or type(root).__name__
    first = text.splitlines()[0]
    if isinstance(root, NotImplementedError):
        return TestResult(**base, status=Status.TODO, score=0.0, message=first + _learner_frame(root),
                          hint=f"implement `{base['exercise']}`: replace the TODO's `raise` with your code")
    where = _learner_frame(root)
    kind = failures.classify(root, str(base["tier"]), learner_raised=bool(where), timeout_type=timeout.CallTimeout,
                             submission_type=target.SubmissionError)
    if isinstance(root, timeout.CallTimeout):  # where the learner's code was when it was stopped
        first += where
    elif not isinstance(root, AssertionError | target.SubmissionError):
        first = f"{type(root).__name__}: {first}{where}"
    rest = "\n".join(text.splitlines()[1:])
    table = getattr(root, "table", "")
    replay = f"replay: {replay_command(base['unit'], base['exercise'], case)} (the same inputs every run)"
    ran = kind is not failures.FailureKind.SUBMISSION  # a file that does not load ran no call of the learner's
    detail = [x for x in (f"inputs: {inputs}" if inputs and ran else "",
                          f"last call of your code: {call}" if call and ran else "", rest, table, notes) if x]
    if ran:
        detail.append(replay)
    return TestResult(**base, status=Status.FAILED, score=0.0, message=first, detail="\n".join(detail),
                      hint=failures.hint_for(kind, str(base["tier"]), hint), kind=kind.value)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Append this test's result to the report file as soon as it is known."""
    result = item.stash.get(_RESULTS, None)
    path = item.config.getoption(REPORT_OPTION)
    if result is not None and path and path.startswith("fd:"):
        os.write(int(path[3:]), (result.to_json() + "\n").encode())
    elif result is not None and path:
        with open(path, "a") as f:
            f.write(result.to_json() + "\n")
