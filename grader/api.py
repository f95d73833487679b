"""Typed entry points the CLI calls: ``grade``, ``units``, ``stubs``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from grader.authoring import stubs
from grader.grading import command
from grader.grading.results import GradeReport, Tier, read_results
from grader.grading.target import REPO_ROOT, TARGET_ENV, display_path, is_unit

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
) -> GradeReport:
    """Grade ``target`` (a folder laid out like exercises/) on the given units; all by default.

    Runs the units' grading tests with pytest in a child process, so the learner's code cannot
    outlive or disturb the caller, and reads back the results the plugin recorded. ``timeout``:
    seconds before the child is stopped (GraderError); none by default.
    """
    target = Path(target).resolve()
    if not target.is_dir():
        raise GraderError(f"target {target} is not a folder: pass a folder laid out like exercises/")
    chosen = resolve_units(units)
    with tempfile.TemporaryDirectory(prefix="dripstone-") as tmp:
        report_path = Path(tmp) / "results.jsonl"
        cmd = command.pytest_command(sys.executable, REPO_ROOT, command.unit_paths(REPO_ROOT, chosen), target=target,
                                     report=report_path, exercises=exercises, junit=junit)
        # Hypothesis keeps a cache of constants beside its database: keep both out of the repo and target.
        env = {**os.environ, TARGET_ENV: str(target), "PYTHONDONTWRITEBYTECODE": "1",
               "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp) / "hypothesis")}
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GraderError(f"grading {display_path(target)} ran past {timeout:g} s and was stopped: "
                              "look for an endless loop or a hang in it") from None
        if log:
            log.write_text(proc.stdout + proc.stderr)
        results = read_results(report_path)
    if proc.returncode not in (0, 1) or (not results and proc.returncode != 5):
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise GraderError(f"pytest exited with {proc.returncode} while grading {display_path(target)}:\n{tail}")
    if not results:
        raise GraderError(f"no grading tests matched (units {chosen}, exercises {list(exercises) or 'all'})")
    return GradeReport(target=display_path(target), results=tuple(results))


def check_stubs() -> list[stubs.Drift]:
    """How exercises/ differs from the stubs solutions/ generates."""
    return stubs.check(REPO_ROOT / "solutions", REPO_ROOT / "exercises")


def write_stubs(units: Sequence[str] = ()) -> list[Path]:
    """Regenerate exercises/ from solutions/ (every unit, or the named ones)."""
    return stubs.write(REPO_ROOT / "solutions", REPO_ROOT / "exercises", tuple(units))


def manifest(units: Sequence[str] = ()) -> list[dict[str, object]]:
    """The grading tests of ``units`` (all by default) as the plugin collects them: one dict per test with
    nodeid, unit, exercise, tier, points and hint. No learner code runs; GraderError if collection fails."""
    chosen = resolve_units(units)
    with tempfile.TemporaryDirectory(prefix="dripstone-manifest-") as tmp:
        path = Path(tmp) / "manifest.json"
        cmd = [sys.executable, "-m", "pytest", "--collect-only", "-qq", *(str(TESTS / u) for u in chosen),
               "-p", "grader.grading.plugin", "-p", "no:cacheprovider", "--dripstone-manifest", str(path),
               "--rootdir", str(REPO_ROOT), "-c", str(REPO_ROOT / "pyproject.toml")]
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
