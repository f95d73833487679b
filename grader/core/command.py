"""The grading run's pytest command line, built in one place.

``grader.api.grade``, batch grading's sandbox and its manifest collection, and the self-test's corpus
runner (:mod:`grader.authoring.corpus`, which passes the arguments to ``pytest.main`` in-process) all
run the same pytest: the grader's plugin, the repo's pyproject.toml, quiet output, plain asserts.
This module imports nothing heavy: the batch judge builds command lines without importing pytest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grader.core import timeout

PLUGIN = "grader.judge.plugin"
TARGET_OPTION = "--target"
EXERCISE_OPTION = "--exercise"
REPORT_OPTION = "--dripstone-report"
MANIFEST_OPTION = "--dripstone-manifest"
CASE_OPTION = "--dripstone-case"
CALL_TIMEOUT_OPTION = timeout.OPTION


def unit_paths(repo: Path, units: Sequence[str]) -> list[Path]:
    """The grading test folders of ``units`` in ``repo`` (tests/<unit>)."""
    return [repo / "tests" / u for u in units]


def pytest_args(
    repo: Path,
    paths: Sequence[Path | str],
    *,
    target: Path | str | None = None,
    report: Path | str | None = None,
    manifest: Path | str | None = None,
    exercises: Sequence[str] = (),
    junit: Path | None = None,
    collect_only: bool = False,
    call_timeout: float | None = None,
    case: int = 0,
) -> list[str]:
    """pytest's arguments (after ``python -m pytest``) to grade ``target`` on the tests in ``paths``.

    ``report``: a results file or ``fd:N``; ``manifest``: where the collected graded tests go;
    ``collect_only``: collect, run nothing (no learner code runs); ``call_timeout``: seconds a learner
    call may run (0: no limit; None: the plugin's default); ``case``: with one exercise, its N-th test only.
    """
    # unraisableexception: its collections at the end of the session cost ~0.25 s per grading run (a learner's
    # exception in __del__ is then printed by Python, as outside pytest, instead of turned into a warning)
    args = [*(str(p) for p in paths), "-p", PLUGIN, "-p", "no:cacheprovider", "-p", "no:unraisableexception"]
    if collect_only:
        args.append("--collect-only")
    for option, value in ((TARGET_OPTION, target), (REPORT_OPTION, report), (MANIFEST_OPTION, manifest)):
        if value is not None:
            args += [option, str(value)]
    args += ["-q", "--no-header", "-rN", "--tb=no", "--assert=plain",
             "--rootdir", str(repo), "-c", str(repo / "pyproject.toml")]
    args += [a for e in exercises for a in (EXERCISE_OPTION, e)]
    if call_timeout is not None:
        args += [CALL_TIMEOUT_OPTION, f"{call_timeout:g}"]
    if case:
        args += [CASE_OPTION, str(case)]
    if junit is not None:
        args.append(f"--junitxml={junit}")
    return args


def pytest_command(python: Path | str, repo: Path, paths: Sequence[Path | str], **options: Any) -> list[str]:
    """``python -m pytest`` with :func:`pytest_args` (the same keyword options)."""
    return [str(python), "-m", "pytest", *pytest_args(repo, paths, **options)]
