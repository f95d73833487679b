"""The engine's layering (grader/LAYERS.md): no import upward, no import cycle, inside functions included."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.core import layers
from grader.instructor import release, sandbox


def test_no_module_imports_from_a_higher_layer():
    assert layers.violations() == []


def test_no_import_cycle_even_through_function_level_imports():
    assert layers.cycles() == []


def test_every_module_belongs_to_a_layer():
    for module in layers.modules():
        layers.layer_of(module)  # ValueError names the module


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "grader"
    for rel, text in {"__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_an_upward_import_inside_a_function_is_a_violation_with_its_line(tmp_path):
    root = _package(tmp_path, {
        "core/__init__.py": "", "core/target.py": "def f():\n    from grader.judge import plugin\n",
        "judge/__init__.py": "", "judge/plugin.py": "from grader.core import target\n",
    })
    said = layers.violations(root)
    assert said == ["grader/core/target.py:2: grader.core.target (core) imports grader.judge.plugin (judge) inside "
                    "a function"]
    assert layers.cycles(root) == [["grader.core.target", "grader.judge.plugin", "grader.core.target"]]


def test_relative_imports_and_from_package_imports_are_resolved(tmp_path):
    root = _package(tmp_path, {
        "instrument/__init__.py": "", "instrument/worker.py": "from . import traffic\nfrom .traffic import x\n",
        "instrument/traffic.py": "x = 1\n", "kit/__init__.py": "from grader.instrument import worker\n",
    })
    assert {n for n, _, _ in layers.imports_of("grader.instrument.worker", root)} == {"grader.instrument.traffic"}
    assert layers.reachable(["grader.kit"], up_to=3, root=root) == [
        "grader.instrument.traffic", "grader.instrument.worker", "grader.kit"]
    assert layers.violations(root) == [] and layers.cycles(root) == []


def test_a_module_outside_every_layer_is_named():
    with pytest.raises(ValueError, match="grader.newthing is in no layer"):
        layers.layer_of("grader.newthing")


def test_the_judge_preload_is_derived_and_holds_what_the_judge_reaches():
    preload = sandbox.judge_preload()
    ours = [m for m in preload if m.startswith("grader")]
    for needed in ("grader.judge.plugin", "grader.judge.harness", "grader.instrument.worker", "grader.instrument.guard",
                   "grader.instrument.traffic", "grader.kit", "grader.kit.compare", "grader.judge.wire"):
        assert needed in ours, needed
    assert all(layers.layer_of(m)[0] <= layers.layer_of("grader.kit")[0] for m in ours), "only layers the judge uses"
    assert not any(m.startswith(("grader.instructor", "grader.learner", "grader.drill", "grader.api")) for m in ours)


def test_the_student_release_ships_every_module_its_shipped_modules_import():
    """A module the release leaves out (instructor tools, the authoring corpus, GPU-only tools) is imported by no
    module it ships; only the command line reaches instructor modules, inside the commands, and says "instructor
    tool" when they are missing (grader/cli.py::main)."""
    def left_out(path: Path) -> bool:  # the release's copytree skips it, or a folder above it
        parts = [path, *path.parents[: len(path.relative_to(layers.GRADER).parts) - 1]]
        return any(part.name in release.GRADER_SKIP(str(part.parent), [part.name]) for part in parts)

    shipped = {m for m, p in layers.modules().items() if not left_out(p)}
    assert "grader.judge.plugin" in shipped and "grader.instructor.batch" not in shipped
    missing = [f"{m} imports {n} (line {line})" for m in sorted(shipped) for n, line, nested in layers.imports_of(m)
               if n not in shipped and not (m == "grader.cli" and nested and n.startswith("grader.instructor."))]
    assert missing == []


def test_one_function_says_which_line_of_the_submission_raised(tmp_path, monkeypatch):
    """core.target.learner_frame: the innermost frame in the target (or in one file), whatever called it; the
    loader, the worker, the plugin and the rank runner use it."""
    from grader.core import target

    (tmp_path / "u").mkdir()
    learner = tmp_path / "u" / "m.py"
    learner.write_text("def inner():\n    raise ValueError('x')\n\n\ndef outer(call):\n    call(inner)\n")
    namespace: dict = {}
    exec(compile(learner.read_text(), str(learner), "exec"), namespace)
    try:
        namespace["outer"](lambda f: f())  # the grader's frame (this file) sits between two learner frames
    except ValueError as exc:
        raised = exc
    monkeypatch.setenv(target.TARGET_ENV, str(tmp_path))
    target._ROOTS.clear()
    frame = target.learner_frame(raised)
    assert frame is not None and (Path(frame.filename), frame.lineno) == (learner, 2)
    assert target.learner_frame(raised, learner).lineno == 2
    assert target.learner_frame(raised, tmp_path / "elsewhere") is None
    target._ROOTS.clear()
