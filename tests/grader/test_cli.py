"""The commands a user types, end to end."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import api
from grader.core.target import REPO_ROOT


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


# ---- a learner's work survives stubs, reset and release -------------------------------------------------------------

ANSWER = "    return peak_flops / mem_bw  # my answer\n"
RIDGE_TODO = "    raise NotImplementedError('TODO: validate, then divide.')\n"


def learner_clone(tmp_path: Path) -> Path:
    """A copy of this course as a learner clones it, with an answer in L12's ridge_point."""
    root = tmp_path / "clone"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in ("grader", "solutions", "exercises", "tests"):
        shutil.copytree(REPO_ROOT / name, root / name, ignore=skip)
    for name in ("pyproject.toml", "requirements.txt", "CONVENTIONS.md", "GLOSSARY.md"):
        shutil.copy2(REPO_ROOT / name, root / name)
    mine = root / "exercises/l12_roofline/roofline.py"
    assert RIDGE_TODO in mine.read_text()
    mine.write_text(mine.read_text().replace(RIDGE_TODO, ANSWER))
    return root


def run_in(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m grader`` of the tree at ``root`` (its own grader and REPO_ROOT)."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=root, capture_output=True, text=True, env=env)


def test_stubs_keep_a_learners_answers_and_say_what_to_run(tmp_path):
    root = learner_clone(tmp_path)
    mine = root / "exercises/l12_roofline/roofline.py"
    answered = mine.read_text()
    check = run_in(root, "stubs", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "exercises/l12_roofline/roofline.py: differs from the stub" in check.stdout
    assert "your answers in exercises/ differ from the stubs: that is expected for a learner" in check.stdout
    assert "make grade" in check.stdout and "out of date" not in check.stdout
    stubs = run_in(root, "stubs")
    assert stubs.returncode == 1 and "refusing to overwrite" in stubs.stdout and "--force" in stubs.stdout
    assert "exercises/l12_roofline/roofline.py" in stubs.stdout and mine.read_text() == answered


def test_reset_restores_one_function_and_keeps_the_answer_in_a_backup(tmp_path):
    root = learner_clone(tmp_path)
    mine = root / "exercises/l12_roofline/roofline.py"
    mine.write_text(mine.read_text() + "\n\ndef my_helper():\n    return 1\n")
    answered = mine.read_text()
    proc = run_in(root, "reset", "12:ridge_point")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (backup,) = (root / "exercises/l12_roofline/.backup").iterdir()
    assert (f"restored `ridge_point` in {mine.relative_to(root)} from the stub; your version is kept in "
            f"{backup.relative_to(root)}") in proc.stdout
    assert backup.read_text() == answered
    assert RIDGE_TODO in mine.read_text() and "def my_helper" in mine.read_text()
    again = run_in(root, "reset", "12:ridge_point")
    assert "already the stub, nothing to do" in again.stdout and len(list(backup.parent.iterdir())) == 1
    unknown = run_in(root, "reset", "12:no_such_exercise")
    assert unknown.returncode == 2 and "exercises: attainable_flops, bank_conflict_degree" in unknown.stdout


def test_release_holds_fresh_stubs_and_resets_without_solutions(tmp_path):
    root = learner_clone(tmp_path)
    mine = root / "exercises/l12_roofline/roofline.py"
    answered = mine.read_text()
    proc = run_in(root, "release", str(tmp_path / "rel"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rel = tmp_path / "rel"
    released = rel / "exercises/l12_roofline/roofline.py"
    assert RIDGE_TODO in released.read_text() and "my answer" not in released.read_text()
    assert mine.read_text() == answered  # the learner's file is untouched
    assert (rel / ".stubs/l12_roofline/roofline.py").read_text() == released.read_text()
    assert not (rel / "solutions").exists() and (rel / "exercises/l12_roofline/.stubs.json").is_file()
    released.write_text(released.read_text().replace(RIDGE_TODO, ANSWER))
    reset = run_in(rel, "reset", "L12:ridge_point")
    assert reset.returncode == 0 and "your version is kept in" in reset.stdout, reset.stdout + reset.stderr
    assert RIDGE_TODO in released.read_text()
    assert "my answer" in next((rel / "exercises/l12_roofline/.backup").iterdir()).read_text()


# ---- make grade: an endless loop fails its test, Ctrl-C prints what was graded --------------------------------------

ENDLESS = "    while True:\n        pass\n"
# Swallows the alarm, like compiled code a signal cannot stop; only the first call ever (a file marks it): the tests
# after it in the new grading process would pass on the solution, yet fail at once (one limit per function).
STUCK_ONCE = ("    import pathlib\n    mark = pathlib.Path(__file__).with_name('stuck-once')\n"
              "    if not mark.exists():\n        mark.touch()\n        while True:\n"
              "            try:\n                while True:\n                    pass\n"
              "            except BaseException:\n                pass\n")


def looping_target(tmp_path: Path, **bodies: str) -> Path:
    """solutions/l12_roofline with ``bodies`` put at the top of the named functions."""
    target = tmp_path / "target"
    shutil.copytree(REPO_ROOT / "solutions/l12_roofline", target / "l12_roofline")
    path = target / "l12_roofline/roofline.py"
    text = path.read_text()
    for name, body in bodies.items():
        head = next(line for line in text.splitlines(keepends=True) if line.startswith(f"def {name}("))
        text = text.replace(head, head + body)
    path.write_text(text)
    return target


@pytest.mark.slow
def test_an_endless_loop_fails_its_test_and_the_rest_of_the_unit_is_graded(tmp_path):
    target = looping_target(tmp_path, ridge_point=ENDLESS, bank_conflict_degree=STUCK_ONCE)
    start = time.monotonic()
    proc = run("grade", "--target", str(target), "--unit", "12", "--timeout", "1", "--csv", str(tmp_path / "s.csv"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    by = {e: [r for r in rows if r["exercise"] == e] for e in {r["exercise"] for r in rows}}
    assert len(by["ridge_point"]) > 1 and all(r["status"] == "failed" for r in by["ridge_point"])
    first = "ridge_point did not return within 1 s: an endless loop? It was stopped."
    again = "ridge_point did not return within 1 s: in an earlier test: it is not called again"
    assert [r["message"].startswith(first) for r in by["ridge_point"]].count(True) == 1, "one limit per function"
    assert all(r["message"].startswith((first, again)) for r in by["ridge_point"])
    # its bad-argument tests passed but are gated by the stuck test (no points for refusing alone)
    gated = [r for r in by["bank_conflict_degree"] if r["message"].startswith("not scored while")]
    stuck = [r for r in by["bank_conflict_degree"] if r["status"] == "failed" and r not in gated]
    assert "could not be interrupted" in stuck[0]["message"]
    assert len(stuck) > 1, "the tests after it ran in a new grading process"
    assert all(r["message"].startswith("bank_conflict_degree did not return within 1 s: in an earlier test")
               for r in stuck[1:]), "the new process knows the function hung: it is not waited for again"
    assert all(r["status"] == "passed" for e in ("attainable_flops", "gemm_intensity") for r in by[e])
    assert time.monotonic() - start < 240


def _sigint_as_in_a_terminal() -> None:
    """In the child, before it runs: SIGINT handled and not blocked, as in a terminal, whatever this test process
    passes on (a process started with SIGINT ignored ignores Ctrl-C for good: Python then installs no handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow
def test_ctrl_c_prints_the_scoreboard_of_what_was_graded(tmp_path):
    target = looping_target(tmp_path, bank_conflict_degree=ENDLESS)
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where grade's report file appears
    proc = subprocess.Popen([sys.executable, "-m", "grader", "grade", "--target", str(target), "-u", "12",
                             "--timeout", "0"], cwd=REPO_ROOT, env=env, text=True, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_sigint_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 180
        while not any(p.stat().st_size for p in tmp_path.glob("dripstone-*/*.jsonl")) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(5)  # bank_conflict_degree, graded last, loops forever: grading hangs there
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
        try:
            out, err = proc.communicate(timeout=180)  # a loaded machine: printing the scoreboard can take a while
        except subprocess.TimeoutExpired:  # say where it hangs: each process of the group and what it waits in
            ps = subprocess.run(["ps", "-o", "pid,ppid,stat,wchan:24,etime,args", "-g", str(proc.pid)],
                                capture_output=True, text=True).stdout
            pytest.fail(f"grade did not exit within 180 s of Ctrl-C; its processes:\n{ps}")
    finally:  # a failed test must not leave the endless loop spinning
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out + err
    assert "grading was interrupted (Ctrl-C) after" in out and "Traceback" not in out + err
    assert "ridge_point" in out and "PASS" in out and "bank_conflict_degree" not in out


def test_ctrl_c_taken_by_another_thread_still_stops_the_wait_for_the_grading_child():
    """The kernel may hand Ctrl-C to any thread of `grade` (the progress display has one): the main thread, waiting
    for the grading child, must still raise KeyboardInterrupt and stop the child (it used to wait until the child
    ended, forever for a learner's endless loop; seen as a rare hang of the Ctrl-C test above)."""
    code = """
import signal, subprocess, sys, threading, time
from grader import api
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # only the other thread can take it
ready = threading.Event()
def other():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    ready.set()
    time.sleep(120)
threading.Thread(target=other, daemon=True).start()
ready.wait()
print("waiting", flush=True)
start = time.monotonic()
try:
    api._run_child([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                    "time.sleep(120)"], {}, None)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.1f} s", flush=True)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_sigint_as_in_a_terminal)
    try:
        assert proc.stdout.readline().strip() == "waiting"
        time.sleep(1)
        os.kill(proc.pid, signal.SIGINT)  # to the process: the kernel gives it to the thread that does not block it
        out, err = proc.communicate(timeout=60)  # the child sleeps 120 s: only an interrupted wait ends sooner
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert "interrupted after" in out, out + err


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_the_grading_child_dies_with_the_process_that_started_it(tmp_path):
    """Issue 31: nbgrader stopped, the engine's child kept spinning in the learner's endless loop. Killed with
    SIGKILL (no handler can run), the grader's child goes too."""
    target = looping_target(tmp_path, ridge_point=ENDLESS)
    script = (f"from grader import api\napi.grade({str(target)!r}, units=['l12_roofline'], "
              "exercises=['ridge_point'], call_timeout=0)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=REPO_ROOT, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _children(parent.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        (child,) = _children(parent.pid)
        time.sleep(1.5)  # in the learner's loop by now, or about to be
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        state = Path(f"/proc/{child}/stat").read_text().split()[2] if Path(f"/proc/{child}").exists() else "gone"
        assert state in ("gone", "Z"), f"the grading child {child} outlived its parent (state {state})"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)


def test_make_test_says_it_is_for_course_authors_before_installing_anything():
    """Issue 35: `make test` installed the instructor extras (~90 s, 2.7 GB) before saying it is for authors."""
    proc = subprocess.run(["make", "-n", "-B", "test"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    said = next(i for i, line in enumerate(lines) if "for its authors" in line)
    installs = [i for i, line in enumerate(lines) if "pip install" in line or "env-instructor" in line]
    assert installs and said < min(installs), "\n".join(lines[:10])
    assert "make grade" in lines[said + 1]
