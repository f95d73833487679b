"""The latest result of every graded test, kept between runs in ``.dripstone/last.json``.

``make grade`` saves each run here (merged: grading one unit keeps the others' results), so that
``grader progress`` and ``grader report`` answer at once instead of grading everything again.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from grader.core.results import GradeReport, TestResult
from grader.core.target import REPO_ROOT

STATE = REPO_ROOT / ".dripstone"
LAST = STATE / "last.json"


def save(report: GradeReport, path: Path = LAST) -> Path:
    """Merge ``report`` into the saved results of its target (a test graded again replaces its old result)."""
    saved = _read(path)
    entry = saved.setdefault(report.target, {"results": {}})
    for r in report.results:
        entry["results"][r.nodeid] = json.loads(r.to_json())
    entry["last_run"] = [r.nodeid for r in report.results]
    entry["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(saved, indent=1, ensure_ascii=False))
    tmp.replace(path)
    return path


def load(target: str = "exercises", path: Path = LAST) -> tuple[GradeReport, str]:
    """Every saved result of ``target`` (a report), and when it was last updated ("" if never graded)."""
    entry = _read(path).get(target, {})
    results = tuple(TestResult.from_dict(d) for d in entry.get("results", {}).values())
    return GradeReport(target=target, results=results), entry.get("updated", "")


def last_run(target: str = "exercises", path: Path = LAST) -> GradeReport:
    """The results of the latest ``make grade`` run of ``target`` only."""
    entry = _read(path).get(target, {})
    results = entry.get("results", {})
    return GradeReport(target, tuple(TestResult.from_dict(results[n]) for n in entry.get("last_run", [])
                                     if n in results))


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):  # never graded, or a file cut short: start again
        return {}


def save_quietly(report: GradeReport, path: Path = LAST) -> None:
    """:func:`save`, never failing a grading run over it (a read-only clone grades all the same)."""
    with contextlib.suppress(OSError):
        save(report, path)
