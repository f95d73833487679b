"""Stub generation from solution regions, and the --check that keeps exercises/ in sync."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from grader.core import stubs
from grader.core.stubs import StubError, make_stub
from grader.core.target import REPO_ROOT

SOLUTION = textwrap.dedent('''\
    def f(x):
        """Doc."""
        # TODO: double x.
        ### BEGIN SOLUTION
        y = 2 * x
        return y
        ### END SOLUTION


    def g():
        # Plan: nothing.
        # TODO: return one,
        #       as an int.
        ### BEGIN SOLUTION
        return 1
        ### END SOLUTION
''')


def test_regions_become_raises_at_their_indentation():
    stub = make_stub(SOLUTION)
    assert "2 * x" not in stub and "return 1" not in stub
    assert "    raise NotImplementedError('TODO: double x.')\n" in stub
    assert "raise NotImplementedError('TODO: return one, as an int.')" in stub
    assert '"""Doc."""' in stub and "# TODO: double x." in stub and "# Plan: nothing." in stub
    ns: dict = {}
    exec(compile(stub, "stub", "exec"), ns)
    with pytest.raises(NotImplementedError, match="TODO: double x"):
        ns["f"](3)


@pytest.mark.parametrize(
    "source, problem",
    [
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "TODO"),
        ("def f():\n    # TODO: x\n    ### BEGIN SOLUTION\n    return 1\n", "never closed"),
        ("def f():\n    return 1\n    ### END SOLUTION\n", "without"),
        ("# TODO: a\n### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "nested"),
    ],
)
def test_malformed_regions_are_refused_with_the_line(source, problem):
    with pytest.raises(StubError, match=problem):
        make_stub(source, name="solutions/u/m.py")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_check_reports_drift_missing_todo_and_strays(tmp_path):
    sol = _tree(tmp_path / "solutions", {"u/m.py": SOLUTION, "u/README.md": "# U\n", "u/plain.py": "X = 1\n"})
    ex = tmp_path / "exercises"
    assert {d.path for d in stubs.check(sol, ex)} >= {"u/m.py", "u/README.md"}
    stubs.write(sol, ex)
    problems = stubs.check(sol, ex)
    assert [(d.path, d.problem) for d in problems] == [("u/plain.py", "has no TODO: the learner has nothing to do")]
    (sol / "u/plain.py").unlink()
    (ex / "u/plain.py").unlink()
    assert [d.path for d in stubs.check(sol, ex)] == ["u/.stubs.json"]  # it still records u/plain.py
    stubs.write(sol, ex)
    assert stubs.check(sol, ex) == []
    (ex / "u/m.py").write_text(SOLUTION)  # a learner-visible solution: drift
    (ex / "u/extra.py").write_text("# TODO: stray\n")
    assert {(d.path, d.problem) for d in stubs.check(sol, ex)} == {
        ("u/m.py", "differs from the stub (edited since it was generated)"),
        ("u/extra.py", "is in exercises/ but not in solutions/"),
    }


def test_write_only_touches_the_named_units(tmp_path):
    sol = _tree(tmp_path / "solutions", {"a/m.py": SOLUTION, "b/m.py": SOLUTION})
    ex = tmp_path / "exercises"
    written = stubs.write(sol, ex, units=("a",))
    assert written == [ex / "a" / "Makefile", ex / "a" / "m.py", ex / "a" / stubs.MANIFEST]
    assert not (ex / "b").exists() and (ex / "a" / "Makefile").read_text() == stubs.UNIT_MAKEFILE
    assert sorted(stubs.read_manifest(ex)) == ["a/Makefile", "a/m.py"]
    stubs.write(sol, ex, units=("b",))
    assert sorted(stubs.read_manifest(ex)) == ["a/Makefile", "a/m.py", "b/Makefile", "b/m.py"]  # a's record kept


# ---- learners' answers are never overwritten (exercises/<unit>/.stubs.json) ----------------------------------


def _course(tmp_path: Path) -> tuple[Path, Path]:
    sol = _tree(tmp_path / "solutions", {"u/m.py": SOLUTION, "u/README.md": "# U\n"})
    ex = tmp_path / "exercises"
    stubs.write(sol, ex)
    return sol, ex


def test_write_records_what_it_generated_and_check_verifies_the_record(tmp_path):
    sol, ex = _course(tmp_path)
    assert stubs.read_manifest(ex) == {"u/m.py": stubs.digest(make_stub(SOLUTION)),
                                       "u/README.md": stubs.digest("# U\n"),
                                       "u/Makefile": stubs.digest(stubs.UNIT_MAKEFILE)}
    assert stubs.check(sol, ex) == []
    assert json.loads((ex / "u" / stubs.MANIFEST).read_text())["files"] == {
        "README.md": stubs.digest("# U\n"), "m.py": stubs.digest(make_stub(SOLUTION)),
        "Makefile": stubs.digest(stubs.UNIT_MAKEFILE)}  # beside the files: one commit
    (ex / "u" / stubs.MANIFEST).unlink()
    assert [(d.path, d.kind) for d in stubs.check(sol, ex)] == [("u/.stubs.json", stubs.STALE)]
    assert stubs.write(sol, ex) == [ex / "u" / stubs.MANIFEST] and stubs.check(sol, ex) == []


def test_write_refuses_to_overwrite_an_edited_exercise_and_writes_nothing(tmp_path):
    sol, ex = _course(tmp_path)
    answer = make_stub(SOLUTION).replace("raise NotImplementedError('TODO: double x.')", "return x + x")
    (ex / "u/m.py").write_text(answer)
    (sol / "u/README.md").write_text("# U, revised\n")
    with pytest.raises(stubs.StubConflict, match=r"exercises/u/m\.py.*make grade.*--force") as caught:
        stubs.write(sol, ex)
    assert caught.value.paths == ["exercises/u/m.py"]
    assert (ex / "u/m.py").read_text() == answer and (ex / "u/README.md").read_text() == "# U\n"
    assert stubs.write(sol, ex, force=True) == [ex / "u/README.md", ex / "u/m.py", ex / "u" / stubs.MANIFEST]
    assert stubs.check(sol, ex) == []


def test_write_replaces_a_stub_nobody_edited_when_its_solution_changes(tmp_path):
    sol, ex = _course(tmp_path)
    (sol / "u/m.py").write_text(SOLUTION.replace("double x", "twice x"))
    assert [(d.path, d.kind) for d in stubs.check(sol, ex)] == [("u/m.py", stubs.STALE), ("u/.stubs.json", stubs.STALE)]
    assert stubs.write(sol, ex) == [ex / "u/m.py", ex / "u" / stubs.MANIFEST]
    assert "TODO: twice x." in (ex / "u/m.py").read_text() and stubs.check(sol, ex) == []


def test_check_tells_a_learners_answers_from_a_stale_stub(tmp_path):
    sol, ex = _course(tmp_path)
    (ex / "u/m.py").write_text("def f(x):\n    return 2 * x\n")
    (ex / "u/helpers.py").write_text("K = 1\n")
    found = {(d.path, d.kind) for d in stubs.check(sol, ex)}
    assert found == {("u/m.py", stubs.EDITED), ("u/helpers.py", stubs.EDITED)}


# ---- reset: one stub back, the replaced version kept ---------------------------------------------------------------

MINE = make_stub(SOLUTION).replace("raise NotImplementedError('TODO: double x.')", "return x + x").replace(
    "raise NotImplementedError('TODO: return one, as an int.')", "return 1") + "\n\ndef helper():\n    return 3\n"


def test_restore_one_function_keeps_the_rest_and_a_backup(tmp_path):
    path = _tree(tmp_path, {"u/m.py": MINE}) / "u/m.py"
    done = stubs.restore(path, make_stub(SOLUTION), "f")
    text = path.read_text()
    assert "raise NotImplementedError('TODO: double x.')" in text and "return x + x" not in text
    assert "        return 1\n" not in text and "    return 1\n" in text and "def helper():" in text  # g, helper kept
    assert done.changed and done.function == "f" and done.backup.parent == tmp_path / "u" / stubs.BACKUP
    assert done.backup.read_text() == MINE and done.backup.name.startswith("m.") and done.backup.suffix == ".py"
    again = stubs.restore(path, make_stub(SOLUTION), "f")
    assert not again.changed and again.backup is None and len(list(done.backup.parent.iterdir())) == 1


def test_restore_the_whole_file_never_deletes_an_older_backup(tmp_path):
    path = _tree(tmp_path, {"u/m.py": MINE}) / "u/m.py"
    first = stubs.restore(path, make_stub(SOLUTION))
    path.write_text(MINE + "# second try\n")
    second = stubs.restore(path, make_stub(SOLUTION))
    assert path.read_text() == make_stub(SOLUTION)
    assert first.backup != second.backup and first.backup.read_text() == MINE
    assert second.backup.read_text().endswith("# second try\n")
    path.unlink()
    missing = stubs.restore(path, make_stub(SOLUTION))
    assert missing.changed and missing.backup is None and path.read_text() == make_stub(SOLUTION)


def test_restore_refuses_a_function_it_cannot_replace_on_its_own(tmp_path):
    path = _tree(tmp_path, {"u/m.py": "def f(x):\n    return (\n"}) / "u/m.py"
    with pytest.raises(stubs.ResetError, match="does not parse .*reset the whole file"):
        stubs.restore(path, make_stub(SOLUTION), "f")
    path.write_text("def renamed(x):\n    return x\n")
    with pytest.raises(stubs.ResetError, match="defines no top-level `f`"):
        stubs.restore(path, make_stub(SOLUTION), "f")
    assert path.read_text() == "def renamed(x):\n    return x\n" and not (path.parent / stubs.BACKUP).exists()


def test_find_exercise_names_the_module_or_lists_the_exercises():
    unit = {Path("m.py"): make_stub(SOLUTION), Path("k.cu"): "__global__ void sgemm_tiled(float* a) {}\n"}
    assert stubs.find_exercise(unit, "g") == Path("m.py")
    assert stubs.find_exercise(unit, "sgemm_tiled") == Path("k.cu")
    with pytest.raises(stubs.ResetError, match=r"no exercise `h`.*exercises: f, g"):
        stubs.find_exercise(unit, "h")


CLASS_SOLUTION = textwrap.dedent('''\
    class Reducer:
        """A class exercise: its methods hold the regions."""

        def __init__(self, n: int) -> None:
            # TODO: keep n.
            ### BEGIN SOLUTION
            self.n = n
            ### END SOLUTION

        def step(self) -> int:
            # TODO: one more.
            ### BEGIN SOLUTION
            return self.n + 1
            ### END SOLUTION
    ''')


def test_a_class_exercise_is_found_listed_and_reset_on_its_own(tmp_path):
    stub = make_stub(CLASS_SOLUTION) + "\n\n" + make_stub(SOLUTION)
    assert stubs.find_exercise({Path("m.py"): stub}, "Reducer") == Path("m.py")
    with pytest.raises(stubs.ResetError, match=r"exercises: Reducer, f, g"):
        stubs.find_exercise({Path("m.py"): stub}, "nothing")
    mine = stub.replace("raise NotImplementedError('TODO: one more.')", "return self.n + 1", 1)
    mine = mine.replace("raise NotImplementedError('TODO: double x.')", "return x + x", 1)
    path = _tree(tmp_path, {"u/m.py": mine}) / "u/m.py"
    done = stubs.restore(path, stub, "Reducer")
    assert done.changed and "TODO: one more." in path.read_text() and "return x + x" in path.read_text()


@pytest.mark.skipif(shutil.which("git") is None or not (REPO_ROOT / ".git").exists(), reason="not a git checkout")
def test_reset_backups_are_git_ignored():
    """`make reset` copies a learner's version to exercises/<unit>/.backup/: a `git add .` must not commit it."""
    backup = f"exercises/l23_online_softmax/{stubs.BACKUP}/softmax.20261205-101010.py"
    proc = subprocess.run(["git", "check-ignore", "-q", "--no-index", backup], cwd=REPO_ROOT)
    assert proc.returncode == 0, f"{backup} is not ignored: add exercises/*/{stubs.BACKUP}/ to .gitignore"
