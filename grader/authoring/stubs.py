"""Generate ``exercises/`` from ``solutions/``: one source, solution regions between markers.

In a solution file each region sits right under the TODO that names its task::

    # TODO: stream xs once, updating (m, d) with the recurrence.
    ### BEGIN SOLUTION
    ...
    ### END SOLUTION

The stub keeps everything outside the regions (docstrings, plans, signatures, helpers) and replaces
each region by ``raise NotImplementedError("TODO: ...")`` at the region's indentation. In CUDA C++
(``.cu``, ``// ### BEGIN SOLUTION``) a region must sit inside a function body and becomes
``DRIPSTONE_TODO("TODO: ...");``: the solution file defines that macro (``__trap()``) outside its
regions, so the stub compiles, traps if launched, and the grader reports the function as TODO
(grader/kernels/cuda.py). The markers
are nbgrader's, so the same files feed nbgrader's generate_assignment. Other files (READMEs) are
copied as they are. ``--check`` fails when exercises/ differs from what would be generated, or when a
region has no TODO above it: a stub without a TODO cannot tell the learner what to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
COMMENT = {".py": "#", ".cu": "//", ".cuh": "//"}
SKIP = re.compile(r"(__pycache__|\.pyc$|\.hypothesis|\.pytest_cache)")


class StubError(ValueError):
    """A solution file whose regions cannot be turned into a stub."""


@dataclass(frozen=True)
class Drift:
    """One way exercises/ differs from what solutions/ generates."""

    path: str
    problem: str


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


def generate(solutions: Path, units: tuple[str, ...] = ()) -> dict[Path, str]:
    """Relative path → stub text for every file under ``solutions/`` (or under the given units)."""
    out: dict[Path, str] = {}
    for path in sorted(solutions.rglob("*")):
        rel = path.relative_to(solutions)
        if path.is_dir() or SKIP.search(str(rel)) or (units and rel.parts[0] not in units):
            continue
        text = path.read_text()
        out[rel] = make_stub(text, suffix=path.suffix, name=f"solutions/{rel}") if path.suffix in COMMENT else text
    return out


def check(solutions: Path, exercises: Path) -> list[Drift]:
    """Every way exercises/ is out of date with solutions/ (empty when in sync)."""
    want = generate(solutions)
    drift = [Drift(str(rel), "differs from the generated stub") for rel, text in want.items()
             if not (exercises / rel).is_file() or (exercises / rel).read_text() != text]
    for rel, text in want.items():
        if rel.suffix in COMMENT and "TODO" not in text:
            drift.append(Drift(str(rel), "has no TODO: the learner has nothing to do"))
        if rel.suffix == ".py" and BEGIN in (solutions / rel).read_text() and "NotImplementedError" not in text:
            drift.append(Drift(str(rel), "stub raises no NotImplementedError"))
        if rel.suffix in (".cu", ".cuh") and f"{CUDA_TODO}(" in text and f"#define {CUDA_TODO}" not in text:
            drift.append(Drift(str(rel), f"defines no {CUDA_TODO} macro: the stub would not compile"))
    have = {p.relative_to(exercises) for p in exercises.rglob("*") if p.is_file() and not SKIP.search(str(p))}
    drift += [Drift(str(rel), "is in exercises/ but not in solutions/") for rel in sorted(have - set(want))]
    return drift


def write(solutions: Path, exercises: Path, units: tuple[str, ...] = ()) -> list[Path]:
    """Regenerate exercises/ from solutions/ (all units, or the given ones); returns the files written."""
    written = []
    for rel, text in generate(solutions, units).items():
        dest = exercises / rel
        if not dest.is_file() or dest.read_text() != text:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            written.append(dest)
    return written
