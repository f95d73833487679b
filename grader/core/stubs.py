"""Generate ``exercises/`` from ``solutions/``: one source, solution regions between markers.

In a solution file each region sits right under the TODO that names its task::

    # TODO: stream xs once, updating (m, d) with the recurrence.
    ### BEGIN SOLUTION
    ...
    ### END SOLUTION

The stub keeps everything outside the regions (docstrings, plans, signatures, helpers) and replaces
each region by ``raise NotImplementedError("TODO: ...")`` at the region's indentation. In CUDA C++
and C++ extensions (``.cu``, ``.cpp``: ``// ### BEGIN SOLUTION``) a region must sit inside a function body and becomes
``DRIPSTONE_TODO("TODO: ...");``: the solution file defines that macro (``__trap()``) outside its
regions, so the stub compiles, traps if launched, and the grader reports the function as TODO
(grader/instrument/cuda.py). The markers
are nbgrader's, so the same files feed nbgrader's generate_assignment. Other files (READMEs) are
copied as they are. ``--check`` fails when exercises/ differs from what would be generated, or when a
region has no TODO above it: a stub without a TODO cannot tell the learner what to do.

Learners' answers are never overwritten. ``exercises/<unit>/.stubs.json`` (the unit's manifest, committed
with it) records the SHA-256 of every file ``stubs`` generated; :func:`write` replaces a file only
while it still matches that record (or the new stub), and otherwise refuses, naming the files, unless
``force``. :func:`check` tells an edited file (a learner's answers) from a stale one (solutions/
changed since). :func:`restore` (``python -m grader reset``) puts one stub, or one exercise's
function, back after copying what it replaces to ``exercises/<unit>/.backup/``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
COMMENT = {".py": "#", ".cu": "//", ".cuh": "//", ".cpp": "//"}
SKIP = re.compile(r"(__pycache__|\.pyc$|\.hypothesis|\.pytest_cache|(^|/)\.backup/)")
MANIFEST = ".stubs.json"  # in each exercises/<unit>/: the SHA-256 of each file `stubs` generated there
BACKUP = ".backup"  # exercises/<unit>/.backup/: what `reset` replaced
PRISTINE = ".stubs"  # a student release's copy of the stubs it shipped (it has no solutions/): what `reset` restores


class StubError(ValueError):
    """A solution file whose regions cannot be turned into a stub."""


class StubConflict(RuntimeError):
    """``write`` would overwrite files someone edited since ``stubs`` generated them."""

    def __init__(self, paths: list[str]):
        self.paths = paths
        super().__init__(
            "refusing to overwrite files that differ from the stub `python -m grader stubs` last generated "
            f"(a learner's answers, or a hand edit): {', '.join(paths)}. Learners: your work is safe; grade it "
            "with `make grade`, and restore one stub with `python -m grader reset <unit>[:<exercise>]`. "
            "Course authors: move the change into solutions/, then `python -m grader stubs --force` overwrites them."
        )


EDITED, STALE, INVALID = "edited", "stale", "invalid"


@dataclass(frozen=True)
class Drift:
    """One way exercises/ differs from what solutions/ generates.

    ``kind``: EDITED (someone changed the file since it was generated: a learner's answers), STALE
    (solutions/ changed since: run ``stubs``) or INVALID (the solution cannot make a usable stub).
    """

    path: str
    problem: str
    kind: str = INVALID


CUDA_TODO = "DRIPSTONE_TODO"


def _raise_line(indent: str, todo: str, suffix: str) -> str:
    if suffix == ".py":
        return f"{indent}raise NotImplementedError({todo!r})\n"
    return f"{indent}{CUDA_TODO}({json.dumps(todo, ensure_ascii=False)});\n"


def _todo_above(lines: list[str], i: int, comment: str) -> str | None:
    """The text of the ``TODO:`` comment block directly above line ``i``, if any."""
    j = i - 1
    block: list[str] = []
    while j >= 0 and lines[j].strip().startswith(comment):
        block.insert(0, lines[j].strip().removeprefix(comment).strip())
        j -= 1
    for k, text in enumerate(block):
        if text.startswith("TODO"):
            return " ".join([text, *block[k + 1:]]).strip()
    return None


def make_stub(source: str, *, suffix: str = ".py", name: str = "<solution>") -> str:
    """The stub text of one solution file."""
    comment = COMMENT[suffix]
    begin, end = (BEGIN, END) if suffix == ".py" else (f"{comment} {BEGIN}", f"{comment} {END}")
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == end:
            raise StubError(f"{name} line {i + 1}: {END} without {BEGIN}")
        if line.strip() != begin:
            out.append(line)
            i += 1
            continue
        todo = _todo_above(lines, i, comment)
        if todo is None:
            raise StubError(f"{name} line {i + 1}: put a `{comment} TODO: <task>` comment right above {BEGIN}")
        indent = line[: len(line) - len(line.lstrip())]
        if suffix != ".py" and not indent:
            raise StubError(f"{name} line {i + 1}: put CUDA solution regions inside a function body (indented)")
        j = next((k for k in range(i + 1, len(lines)) if lines[k].strip() == end), None)
        if j is None:
            raise StubError(f"{name} line {i + 1}: {BEGIN} is never closed by {END}")
        if any(lines[k].strip() == begin for k in range(i + 1, j)):
            raise StubError(f"{name} line {i + 1}: nested {BEGIN}")
        out.append(_raise_line(indent, todo, suffix))
        i = j + 1
    return "".join(out)


# Every unit's exercises/<unit>/Makefile, written by `stubs` from this one template (never a copy per unit).
UNIT_MAKEFILE = """\
# `make` in this folder grades this unit: it forwards to the course's Makefile (two folders up) with L set
# to this folder's unit. `make watch E=<exercise>`, `make run E=...`, `make hint E=...` work here too.
UNIT := $(notdir $(CURDIR))
FORWARDED := grade watch run hint reset progress report doctor help
.DEFAULT_GOAL := grade
.PHONY: $(FORWARDED)
$(FORWARDED):
\t@$(MAKE) --no-print-directory -C ../.. $@ L=$(UNIT)
"""


def generate(solutions: Path, units: tuple[str, ...] = ()) -> dict[Path, str]:
    """Relative path → stub text for every file under ``solutions/`` (or under the given units), plus each
    unit's forwarding Makefile (:data:`UNIT_MAKEFILE`)."""
    out: dict[Path, str] = {}
    for path in sorted(solutions.rglob("*")):
        rel = path.relative_to(solutions)
        if path.is_dir() or SKIP.search(str(rel)) or (units and rel.parts[0] not in units):
            continue
        text = path.read_text()
        out[rel] = make_stub(text, suffix=path.suffix, name=f"solutions/{rel}") if path.suffix in COMMENT else text
        out.setdefault(Path(rel.parts[0]) / "Makefile", UNIT_MAKEFILE)
    return dict(sorted(out.items()))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _folder(rel: str) -> str:
    """The folder under exercises/ whose manifest records ``rel``: its unit ('' for a top-level file)."""
    return rel.split("/", 1)[0] if "/" in rel else ""


def read_manifest(exercises: Path) -> dict[str, str]:
    """Path relative to exercises/ → SHA-256 of the file ``stubs`` last generated there, from every unit's manifest."""
    out: dict[str, str] = {}
    for path in sorted([*exercises.glob(MANIFEST), *exercises.glob(f"*/{MANIFEST}")]):
        folder = path.parent.relative_to(exercises)
        out |= {(folder / rel).as_posix(): sha for rel, sha in json.loads(path.read_text())["files"].items()}
    return out


def _by_folder(records: dict[str, str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for rel, sha in sorted(records.items()):
        folder = _folder(rel)
        out.setdefault(folder, {})[rel.removeprefix(f"{folder}/") if folder else rel] = sha
    return out


def _write_manifests(exercises: Path, new: dict[str, str], old: dict[str, str]) -> list[Path]:
    """Write the manifest of each folder whose records changed (or that has none); returns the files written."""
    written = []
    before, after = _by_folder(old), _by_folder(new)
    for folder in sorted(set(before) | set(after)):
        path = exercises / folder / MANIFEST
        if after.get(folder) == before.get(folder) and path.is_file():
            continue
        if not after.get(folder):  # solutions/ no longer has this unit: its record goes
            path.unlink(missing_ok=True)
            continue
        body = {"about": "SHA-256 of each file `python -m grader stubs` generated here: it overwrites only files "
                         "that still match (never your answers). Kept by `stubs`, checked by `stubs --check`.",
                "files": after[folder]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body, indent=1) + "\n")
        written.append(path)
    return written


def _exercise_files(exercises: Path) -> set[Path]:
    return {p.relative_to(exercises) for p in exercises.rglob("*")
            if p.is_file() and p.name != MANIFEST and not SKIP.search(p.relative_to(exercises).as_posix())}


def _differs(rel: Path, text: str, exercises: Path, manifest: dict[str, str]) -> Drift | None:
    dest = exercises / rel
    if not dest.is_file():
        return Drift(str(rel), "is missing: run `python -m grader stubs`", STALE)
    have = dest.read_text()
    if have == text:
        return None
    if manifest.get(rel.as_posix()) == digest(have):
        return Drift(str(rel), "is out of date with solutions/: run `python -m grader stubs`", STALE)
    return Drift(str(rel), "differs from the stub (edited since it was generated)", EDITED)


def check(solutions: Path, exercises: Path) -> list[Drift]:
    """Every way exercises/ is out of date with solutions/ (empty when in sync)."""
    want = generate(solutions)
    manifest = read_manifest(exercises)
    drift = [d for rel, text in want.items() if (d := _differs(rel, text, exercises, manifest))]
    for rel, text in want.items():
        if rel.suffix in COMMENT and "TODO" not in text:
            drift.append(Drift(str(rel), "has no TODO: the learner has nothing to do"))
        if rel.suffix == ".py" and BEGIN in (solutions / rel).read_text() and "NotImplementedError" not in text:
            drift.append(Drift(str(rel), "stub raises no NotImplementedError"))
        if rel.suffix in (".cu", ".cuh", ".cpp") and f"{CUDA_TODO}(" in text and f"#define {CUDA_TODO}" not in text:
            drift.append(Drift(str(rel), f"defines no {CUDA_TODO} macro: the stub would not compile"))
    have, should = _by_folder(manifest), _by_folder({rel.as_posix(): digest(text) for rel, text in want.items()})
    drift += [Drift(str(Path(folder) / MANIFEST), "does not record the stubs solutions/ generates: run "
                    "`python -m grader stubs`", STALE)
              for folder in sorted(set(have) | set(should)) if have.get(folder) != should.get(folder)]
    drift += [Drift(str(rel), "is in exercises/ but not in solutions/", EDITED)
              for rel in sorted(_exercise_files(exercises) - set(want))]
    return drift


def write(solutions: Path, exercises: Path, units: tuple[str, ...] = (), *, force: bool = False) -> list[Path]:
    """Regenerate exercises/ from solutions/ (all units, or the given ones); returns the files written.

    Writes nothing and raises :class:`StubConflict` when a file it would replace differs from the stub
    last generated there (the manifest's record), unless ``force``.
    """
    want = generate(solutions, units)
    manifest = read_manifest(exercises)
    if not force:
        edited = [str(Path(exercises.name) / d.path) for rel, text in want.items()
                  if (d := _differs(rel, text, exercises, manifest)) and d.kind == EDITED]
        if edited:
            raise StubConflict(edited)
    written = []
    for rel, text in want.items():
        dest = exercises / rel
        if not dest.is_file() or dest.read_text() != text:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            written.append(dest)
    kept = {k: v for k, v in manifest.items() if units and _folder(k) not in units}
    new = {**kept, **{rel.as_posix(): digest(text) for rel, text in want.items()}}
    return written + _write_manifests(exercises, new, manifest)


# ---- reset: one stub (or one exercise's function) back, the learner's version kept -----------------------


@dataclass(frozen=True)
class Restored:
    """What :func:`restore` did to one file."""

    path: Path  # the exercise file
    backup: Path | None  # where the version it replaced was copied (None: nothing to keep)
    function: str | None  # the one function restored, or None for the whole file
    changed: bool  # False: it already was the stub


class ResetError(ValueError):
    """The exercise or file to reset cannot be found, or its function cannot be replaced on its own."""


def _top_level_def(source: str, name: str) -> tuple[int, int] | None:
    """0-based [start, end) line range of the top-level function or class ``name`` (decorators included)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            return start, node.end_lineno
    return None


def find_exercise(stubs_of_unit: dict[Path, str], name: str) -> Path:
    """The stub file (relative to the unit) that defines exercise ``name``: a top-level Python function or class,
    or a CUDA function of that name in a ``.cu`` file; ResetError listing the exercises otherwise."""
    for rel, text in stubs_of_unit.items():
        if rel.suffix == ".py" and _top_level_def(text, name):
            return rel
    for rel, text in stubs_of_unit.items():
        if rel.suffix in (".cu", ".cuh", ".cpp") and re.search(rf"\b{re.escape(name)}\s*\(", text):
            return rel
    known = sorted(n.name for rel, text in stubs_of_unit.items() if rel.suffix == ".py"
                   for n in ast.parse(text).body
                   if isinstance(n, ast.FunctionDef | ast.ClassDef)
                   and "NotImplementedError" in ast.get_source_segment(text, n))
    raise ResetError(f"no exercise `{name}` in this unit's stubs; its exercises: {', '.join(known)} "
                     f"(or name a file: {', '.join(str(r) for r in sorted(stubs_of_unit))})")


def _backup(path: Path) -> Path:
    """Copy ``path`` to ``<its folder>/.backup/<stem>.<timestamp><suffix>`` (never over an older backup)."""
    folder = path.parent / BACKUP
    folder.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    dest = folder / f"{path.stem}.{stamp}{path.suffix}"
    n = 1
    while dest.exists():
        dest, n = folder / f"{path.stem}.{stamp}-{n}{path.suffix}", n + 1
    dest.write_bytes(path.read_bytes())
    return dest


def _with_function_from_stub(current: str, stub: str, name: str, where: str) -> str:
    """``current`` with its top-level function ``name`` replaced by the stub's; ResetError if not robust."""
    try:
        mine = _top_level_def(current, name)
    except SyntaxError as exc:
        raise ResetError(f"{where} does not parse (line {exc.lineno}: {exc.msg}), so `{name}` cannot be reset on "
                         f"its own: fix the syntax, or reset the whole file") from None
    if mine is None:
        raise ResetError(f"{where} defines no top-level `{name}`: reset the whole file")
    theirs = _top_level_def(stub, name)
    lines = current.splitlines(keepends=True)
    function_text = "".join(stub.splitlines(keepends=True)[theirs[0]:theirs[1]])
    if lines[mine[1]:] and not function_text.endswith("\n"):
        function_text += "\n"
    out = "".join(lines[:mine[0]]) + function_text + "".join(lines[mine[1]:])
    ast.parse(out)  # the stub's function is whole: the file still parses
    return out


def restore(exercise_file: Path, stub: str, function: str | None = None) -> Restored:
    """Put the stub back in ``exercise_file`` (only ``function``, a top-level Python function, when named),
    first copying the version it replaces to ``.backup/``. Never deletes anything."""
    where = f"{exercise_file.parent.name}/{exercise_file.name}"
    if not exercise_file.is_file():
        exercise_file.parent.mkdir(parents=True, exist_ok=True)
        exercise_file.write_text(stub)
        return Restored(exercise_file, None, None, changed=True)
    current = exercise_file.read_text()
    new = stub if function is None else _with_function_from_stub(current, stub, function, where)
    if new == current:
        return Restored(exercise_file, None, function, changed=False)
    backup = _backup(exercise_file)
    exercise_file.write_text(new)
    return Restored(exercise_file, backup, function, changed=True)
