"""``nbgrader autograde`` for a Dripstone course: the grading kernel runs only the course's own code.

nbgrader runs every code cell of a submission in the kernel whose autograder cells then compute the
scores, so a cell a student adds, or an answer cell stripped of its ``%%writefile`` line, could
replace ``score_exercise`` there. The course's ``nbgrader_config.py`` appends this preprocessor to
autograde's sanitizing steps, after nbgrader has restored the locked cells from the gradebook:

- a locked cell of the source notebook stays (nbgrader just restored its source);
- an answer cell gets its ``%%writefile <unit>/<module>`` line from the source notebook back, so the
  whole cell is saved as the module and never runs in the kernel;
- any other code cell becomes a raw cell: kept for the instructor to read, never run.

Learner code then runs only where the engine runs it (its child process). Loaded by nbgrader only.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

WRITEFILE = "%%writefile "


def _answer_source(source: str, header: str) -> str:
    """The answer cell's text behind the source notebook's ``%%writefile`` line."""
    lines = source.split("\n")
    body = lines[1:] if lines and lines[0].lstrip().startswith(WRITEFILE) else lines
    return "\n".join([header, *body])


class RunOnlyCourseCells(NbGraderPreprocessor):
    """Neutralize code a submission could run in the grading kernel (see the module docstring)."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        meta = resources["nbgrader"]
        with Gradebook(meta["db_url"]) as gb:
            cells = gb.find_notebook(meta["notebook"], meta["assignment"]).source_cells
            source = {c.name: (c.locked, c.source) for c in cells if c.cell_type == "code"}
        for cell in nb.cells:
            if cell.cell_type == "code":
                self._sanitize(cell, source)
        return nb, resources

    def _sanitize(self, cell: NotebookNode, source: dict[str, tuple[bool, str]]) -> None:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        locked, text = source.get(grade_id, (False, ""))
        if locked:
            return
        if text.startswith(WRITEFILE):
            cell.source = _answer_source(cell.source, text.split("\n", 1)[0])
            return
        self.log.warning("not running a code cell that is not part of the course (%s)", grade_id or "added")
        cell.cell_type = "raw"
        for key in ("outputs", "execution_count"):
            cell.pop(key, None)
