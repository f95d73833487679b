"""Batch grading end to end, slow: the release graded from its stubs, a batch killed and resumed, a NumPy exercise
graded in the worker, every submission layout through the CLI. A file of its own, so that pytest-xdist runs it
beside test_batch.py's quick tests (make test's wall time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.core.results import Status
from grader.core.target import REPO_ROOT
from grader.instructor import batch, release, sandbox
from grader.instrument import worker

UNIT = "l23_online_softmax"
RESETS_THE_PEAK = '''

_tiled = flash_attention_numpy


def flash_attention_numpy(q, k, v, *, causal=False, sm_scale=None, block_r=16, block_c=16):
    """Cheat: materialize the n x n scores, then hide the peak from the grader's tracemalloc."""
    import tracemalloc

    _scores = q @ k.T
    tracemalloc.reset_peak()
    return _tiled(q, k, v, causal=causal, sm_scale=sm_scale, block_r=block_r, block_c=block_c)
'''


@pytest.mark.slow
def test_release_grades_its_stubs(tmp_path):
    """The released tree grades on its own: every L23 test reported, all TODO at 0."""
    built = release.build(tmp_path / "rel")
    env = {**os.environ, "PYTHONPATH": str(built.out)}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "-u", "23", "--json", str(tmp_path / "r.json")],
        cwd=built.out,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["tests"] and data["score"] == 0 and data["max_score"] > 0


@pytest.mark.slow
def test_batch_resumes_after_kill_9(tmp_path):
    """Killed after the first student, the same command finishes the rest: each graded exactly once."""
    subs = tmp_path / "subs"
    for name in ("a", "b", "c"):
        (subs / name).mkdir(parents=True)
        subprocess.run(["cp", "-r", str(REPO_ROOT / "exercises" / UNIT), str(subs / name / UNIT)], check=True)
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(tmp_path / "out"), "-u", "23"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    first = subprocess.Popen(
        cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    ledger = tmp_path / "out" / "done.jsonl"
    deadline = time.monotonic() + 900
    while not (ledger.exists() and ledger.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.5)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    done_before = ledger.read_text().count("\n")
    assert 1 <= done_before < 3, "kill the batch after its first student"
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-2000:]
    names = [json.loads(line)["student"] for line in ledger.read_text().splitlines()]
    assert sorted(names) == ["a", "b", "c"]
    assert f"{3 - done_before} student(s) to grade" in proc.stdout


@pytest.mark.slow
def test_numpy_exercise_is_graded_in_the_worker_and_its_memory_cheat_refused(tmp_path, monkeypatch):
    """L25's NumPy FlashAttention through batch grading's worker: the solution scores full marks (its
    NumPy results used to be refused at the worker, scoring 0 for everyone), and a submission that
    resets tracemalloc's peak is refused by the audit, with the line, on that exercise only."""
    from grader import api

    unit = "l25_flash_attention"
    monkeypatch.setenv(worker.ISOLATE_ENV, "1")
    honest = api.grade(REPO_ROOT / "solutions", units=[unit], exercises=["flash_attention_numpy"])
    assert honest.results and all(r.status is Status.PASSED for r in honest.results), [
        (r.name, r.message) for r in honest.results if r.status is not Status.PASSED]
    cheat = tmp_path / "cheat"
    import shutil

    shutil.copytree(REPO_ROOT / "solutions" / unit, cheat / unit, ignore=shutil.ignore_patterns("__pycache__"))
    with (cheat / unit / "attention.py").open("a") as f:
        f.write(RESETS_THE_PEAK)
    graded = api.grade(cheat, units=[unit], exercises=["flash_attention_numpy", "flash_attention_fwd"])
    numpy_fa2 = [r for r in graded.results if r.exercise == "flash_attention_numpy"]
    assert numpy_fa2 and all(r.status is Status.FAILED and "import tracemalloc" in r.message for r in numpy_fa2)
    others = [r for r in graded.results if r.exercise != "flash_attention_numpy"]
    assert others and all(r.status in (Status.PASSED, Status.PENDING_GPU) for r in others), [
        (r.name, r.message) for r in others if r.status is not Status.PASSED]


def _cli_batch(subs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # --max-examples: the layouts are what is tested here, not the kernel (a quick pass of its property tests)
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "-u", "23", "-e", "softmax_fused",
           "--jobs", "2", "--max-examples", "3", *extra]
    return subprocess.run(cmd, cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True,
                          text=True, timeout=1800)


@pytest.mark.slow
def test_batch_grades_every_layout_and_says_when_most_students_have_no_unit(tmp_path):
    """End to end in the sandbox: nbgrader's autograded layout, a zip and a folder with their units one folder
    down, a link inside SUBMISSIONS, a student named grades.csv: full marks each; a link outside: 0 with the
    reason, out of the same maximum. Then a batch of empty folders: a loud warning and exit status 3 (it used
    to be 0/max for everyone, exit 0)."""
    import shutil

    if not sandbox.sandbox_python().exists():
        pytest.skip("no sandbox venv (make sandbox-env)")
    subs, solution = tmp_path / "subs", REPO_ROOT / "solutions" / UNIT
    for rel in ("alice/week3", ".store/carol/work", "grades.csv"):
        shutil.copytree(solution, subs / rel / UNIT, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.make_archive(str(subs / "bob"), "zip", subs / ".store" / "carol")
    (subs / "carol").symlink_to(subs / ".store" / "carol")
    (subs / "mallory").symlink_to(REPO_ROOT / "solutions")
    proc = _cli_batch(subs, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    done = batch.read_ledger(tmp_path / "out")
    full = {name: done[name] for name in ("alice", "bob", "carol", "grades.csv", ".store")}
    assert all(g.score == g.max_score > 0 and not g.problems for g in full.values()), full
    mallory = done["mallory"]
    assert mallory.score == 0 and mallory.max_score == done["alice"].max_score
    assert "outside the submissions folder" in mallory.problems[0]
    assert (tmp_path / "out" / "grades.csv").is_file()
    lost = tmp_path / "lost"
    for name in ("a", "b", "c"):
        (lost / name / "notes").mkdir(parents=True)
    shutil.copytree(solution, lost / "d" / UNIT, ignore=shutil.ignore_patterns("__pycache__"))
    proc = _cli_batch(lost, tmp_path / "out2")
    assert proc.returncode == 3, proc.stdout[-3000:]
    assert "WARNING: 3 of 4 students have no unit folder" in " ".join(proc.stdout.split())
    summary = json.loads((tmp_path / "out2" / "summary.json").read_text())
    assert summary["without_units"] == ["a", "b", "c"] and summary["warning"]


@pytest.mark.slow
def test_a_rerun_regrades_what_changed_and_says_why(tmp_path):
    """Issue 31: rerun into the same OUT after a student's files changed said "0 student(s) to grade" and kept the
    old totals. Now the changed student is graded again (and only that one), --regrade names one, and the reasons
    are printed and in summary.json."""
    import csv
    import shutil

    unit, subs, out = "l12_roofline", tmp_path / "subs", tmp_path / "out"
    for name, tree in (("alice", "solutions"), ("bob", "exercises")):
        shutil.copytree(REPO_ROOT / tree / unit, subs / name / unit, ignore=shutil.ignore_patterns("__pycache__"))
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "-u", "12"]

    def run(*extra: str) -> str:
        proc = subprocess.run([*cmd, *extra], cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc.stdout

    def totals() -> dict[str, float]:
        return {r["student"]: float(r["total"]) for r in csv.DictReader((out / "grades.csv").open())}

    assert "2 student(s) to grade" in run("--due", "2000-01-01T00:00", "--late-penalty", "0.5")
    first = totals()
    assert first["alice"] > 0 and first["bob"] == 0
    row = next(csv.DictReader((out / "grades.csv").open()))
    assert float(row["l12_roofline:ridge_point"]) > 0 and int(row["days_late"]) > 1 and row["total_after_late"] == "0.0"
    assert (out / "summary.html").is_file() and (out / "feedback" / "bob.md").is_file()
    assert "l12_roofline:ridge_point" in json.loads((out / "summary.json").read_text())["exercises"]
    assert "TODO" in (out / "junit.xml").read_text() or "failure" in (out / "junit.xml").read_text()
    assert "0 student(s) to grade" in run()
    shutil.copy2(REPO_ROOT / "exercises" / unit / "roofline.py", subs / "alice" / unit / "roofline.py")
    again = run()
    assert "1 student(s) to grade" in again and "graded again: alice (its submission changed)" in again
    assert totals() == {"alice": 0.0, "bob": 0.0}, "grades.csv holds the new grade, not the old one"
    assert json.loads((out / "summary.json").read_text())["regraded"] == {"alice": "its submission changed"}
    named = run("--regrade", "bob")
    assert "1 student(s) to grade" in named and "graded again: bob (--regrade)" in named
    assert len(batch.read_ledger(out)) == 2
