"""``grader batch --nbgrader COURSE --assignment A``: the submissions of an nbgrader course, read directly.

nbgrader keeps what students handed in under ``COURSE/submitted/<student>/<assignment>/<unit>.ipynb``
(``nbgrader collect``, ``zip_collect``, or copied there by hand). :func:`extract` writes each student's
modules as ``DEST/<student>/<unit>/<module>`` from the answer cells only, without running anything:
an answer cell is recognised by its ``grade_id`` in the course's source notebook, and saved at the
path that source cell's ``%%writefile`` line names (a cell whose ``%%writefile`` line was changed or
removed is saved there all the same, as the course's autograde sanitizer does). Cells a student
added, and files handed in beside the notebooks, are left out. ``batch`` then grades ``DEST`` like
any folder of submissions, each student in its own sandbox. This module imports neither nbgrader
nor torch: the notebooks are JSON.

The other way (``grader nbgrader-submit FOLDER --course COURSE --assignment A``, :func:`to_notebooks`): submissions
handed in as folders laid out like ``exercises/`` become ``COURSE/submitted/<student>/<A>/<unit>.ipynb``, the
released notebook of each unit with its answer cells holding the student's files (a file the student did not hand
in keeps the released stub), so ``nbgrader autograde`` grades them as any collected notebook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from grader.core.target import is_unit

WRITEFILE = "%%writefile "
MODULE = re.compile(r"[A-Za-z0-9_]+\.(py|cu|cuh)")


class CourseError(ValueError):
    """The course or a notebook could not be read; the message says what and how to fix it."""


def _source_text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _grade_id(cell: dict) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def answer_paths(course: Path, assignment: str) -> dict[str, dict[str, str]]:
    """``{unit: {grade_id: "<unit>/<module>"}}`` of the answer cells of the course's source notebooks."""
    source = course / "source" / assignment
    if not source.is_dir():
        raise CourseError(f"{source} not found: is {course} an nbgrader course written by `python -m grader "
                          f"nbgrader-course {course} --assignment {assignment}`? (check the course and assignment)")
    paths: dict[str, dict[str, str]] = {}
    for nb in sorted(source.glob("*.ipynb")):
        for cell in json.loads(nb.read_text()).get("cells", []):
            first = _source_text(cell).split("\n", 1)[0].strip()
            if cell.get("cell_type") == "code" and first.startswith(WRITEFILE):
                rel = first.removeprefix(WRITEFILE).strip()
                unit, _, module = rel.partition("/")
                if is_unit(unit) and MODULE.fullmatch(module) and _grade_id(cell):
                    paths.setdefault(nb.stem, {})[str(_grade_id(cell))] = f"{unit}/{module}"
    if not paths:
        raise CourseError(f"no answer cell (%%writefile <unit>/<module>) in {source}/*.ipynb: regenerate the course "
                          "with `python -m grader nbgrader-course`")
    return paths


def _body(text: str) -> str:
    """The answer cell's text behind its ``%%writefile`` line (kept or not by the student)."""
    first, _, rest = text.partition("\n")
    return rest if first.lstrip().startswith(WRITEFILE) else text


def _write_notebook(notebook: Path, cells: dict[str, str], dest: Path) -> None:
    try:
        nb = json.loads(notebook.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        (dest / "NOT_A_NOTEBOOK.txt").write_text(f"{notebook.name}: not a notebook ({exc})\n")
        return
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        rel = cells.get(str(_grade_id(cell))) if isinstance(cell, dict) else None
        if rel and cell.get("cell_type") == "code":
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_body(_source_text(cell)), errors="surrogateescape")


def extract(course: Path, assignment: str, dest: Path) -> Path:
    """``dest/<student>/<unit>/<module>`` for every student who submitted ``assignment``; returns ``dest``."""
    paths = answer_paths(course, assignment)
    submitted = course / "submitted"
    if not submitted.is_dir():
        raise CourseError(f"{submitted} not found: collect the submissions first (`nbgrader collect {assignment}`, "
                          f"`nbgrader zip_collect {assignment}`, or copy them to submitted/<student>/{assignment}/)")
    dest.mkdir(parents=True)
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and not p.is_symlink()):
        folder = student / assignment
        if not folder.is_dir() or folder.is_symlink():
            continue
        mine = dest / student.name
        mine.mkdir()
        for unit, cells in paths.items():
            notebook = folder / f"{unit}.ipynb"
            if notebook.is_file() and not notebook.is_symlink():
                _write_notebook(notebook, cells, mine)
    return dest


def _student_folders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))


def to_notebooks(folder: Path, course: Path, assignment: str) -> list[Path]:
    """COURSE/submitted/<student>/<assignment>/<unit>.ipynb for every student folder of ``folder`` (laid out like
    exercises/) and every unit the course releases; returns the notebooks written. Refuses to overwrite a
    submission already there (nbgrader's own, or an earlier run)."""
    paths = answer_paths(course, assignment)
    release = course / "release" / assignment
    if not release.is_dir():
        raise CourseError(f"{release} not found: run `nbgrader generate_assignment {assignment}` in {course} first "
                          "(the students' notebooks are the released ones, never the source with its solutions)")
    written = []
    for student in _student_folders(folder):
        dest = course / "submitted" / student.name / assignment
        if dest.exists():
            raise CourseError(f"{dest} exists: remove it or leave that student out (nothing is overwritten)")
        for unit, cells in paths.items():
            released = release / f"{unit}.ipynb"
            if not released.is_file() or not (student / unit).is_dir():
                continue
            nb = json.loads(released.read_text())
            for cell in nb.get("cells", []):
                rel = cells.get(str(_grade_id(cell)))
                mine = student / rel if rel else None
                if mine is not None and mine.is_file() and not mine.is_symlink():
                    cell["source"] = f"{WRITEFILE}{rel}\n" + mine.read_text(errors="surrogateescape")
            dest.mkdir(parents=True, exist_ok=True)
            out = dest / f"{unit}.ipynb"
            out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", errors="surrogateescape")
            written.append(out)
    return written
