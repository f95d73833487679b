"""The commands a user types, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grader import api
from grader.grading.target import REPO_ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=REPO_ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("given, unit", [("23", "l23_online_softmax"), ("L23", "l23_online_softmax"),
                                         ("l23_online_softmax", "l23_online_softmax")])
def test_unit_names_resolve(given, unit):
    assert api.resolve_units([given]) == [unit]


def test_unknown_unit_is_a_grader_error_listing_units():
    proc = run("grade", "--unit", "99")
    assert proc.returncode == 2 and "no unit '99'; units with tests:" in proc.stdout
    assert "l23_online_softmax" in proc.stdout


def test_target_must_be_a_folder():
    proc = run("grade", "--target", "no/such/dir", "--unit", "23")
    assert proc.returncode == 2 and "is not a folder" in proc.stdout


@pytest.mark.slow
def test_grade_writes_gradescope_json_and_junit(tmp_path):
    out, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    proc = run("grade", "--target", "solutions", "--unit", "23", "--exercise", "softmax_hbm_bytes",
               "--json", str(out), "--junit", str(junit))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    gs = json.loads(out.read_text())
    assert gs["score"] == gs["max_score"] == 10
    assert {t["extra_data"]["exercise"] for t in gs["tests"]} == {"softmax_hbm_bytes"}
    assert "<testsuite" in junit.read_text()
    assert "l23_online_softmax: 10/10 points" in proc.stdout


@pytest.mark.slow
def test_make_grade_on_the_stubs_exits_zero_and_names_the_first_todo():
    # A clean make: `make test ARGS=...` must not leak its pytest arguments into `make grade`.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ARGS")}
    proc = subprocess.run(["make", "-s", "grade", "L=23"], cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "l23_online_softmax: 0/" in proc.stdout
    assert "next: l23_online_softmax" in proc.stdout and "TODO:" in proc.stdout
