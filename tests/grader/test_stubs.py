"""Stub generation from solution regions, and the --check that keeps exercises/ in sync."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.authoring import stubs
from grader.authoring.stubs import StubError, make_stub

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
    assert stubs.check(sol, ex) == []
    (ex / "u/m.py").write_text(SOLUTION)  # a learner-visible solution: drift
    (ex / "u/extra.py").write_text("# TODO: stray\n")
    assert {(d.path, d.problem) for d in stubs.check(sol, ex)} == {
        ("u/m.py", "differs from the generated stub"),
        ("u/extra.py", "is in exercises/ but not in solutions/"),
    }


def test_write_only_touches_the_named_units(tmp_path):
    sol = _tree(tmp_path / "solutions", {"a/m.py": SOLUTION, "b/m.py": SOLUTION})
    ex = tmp_path / "exercises"
    written = stubs.write(sol, ex, units=("a",))
    assert written == [ex / "a" / "m.py"] and not (ex / "b").exists()
