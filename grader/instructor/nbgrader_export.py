"""``nbgrader export`` for a Dripstone course: nbgrader's CSV, then one column per exercise.

The course's ``nbgrader_config.py`` selects this plugin. nbgrader's own CSV plugin writes its rows
first (same columns, same values); this one appends ``<notebook>/<grade cell>`` columns read from the
gradebook: one per autograder cell, so one per unit and exercise, in the notebook's order. Loaded by nbgrader only.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin


def notebook_order(assignment: str, notebook: str, course: Path = Path(".")) -> dict[str, int]:
    """Each cell's position in the course's source notebook (``nbgrader export`` runs in the course folder);
    empty when it cannot be read."""
    path = course / "source" / assignment / f"{notebook}.ipynb"
    try:
        cells = json.loads(path.read_text())["cells"]
    except (OSError, ValueError, KeyError):
        return {}
    return {c.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""): i for i, c in enumerate(cells)}


def cell_columns(gradebook: Gradebook, course: Path = Path(".")) -> list[str]:
    """``<notebook>/<cell>`` of every graded cell, by assignment, notebook, then the cell's place in the
    notebook (by name where the source notebook cannot be read)."""
    columns = []
    for a in gradebook.assignments:
        for nb in a.notebooks:
            order = notebook_order(a.name, nb.name, course)
            cells = sorted(nb.grade_cells, key=lambda c: (order.get(c.name, len(order)), c.name))
            columns += [f"{nb.name}/{cell.name}" for cell in cells]
    return columns


def cell_scores(gradebook: Gradebook, assignment: str, student: str) -> dict[str, float]:
    """Score of every graded cell of one submission; empty when the student submitted nothing."""
    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return {}
    return {f"{nb.name}/{g.name}": g.score for nb in submission.notebooks for g in nb.grades}


class ExerciseCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export with one more column per exercise (points scored, 0.0 if not submitted)."""

    def export(self, gradebook: Gradebook) -> None:
        super().export(gradebook)
        dest = Path(self.to or "grades.csv")
        with dest.open(newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
        columns = cell_columns(gradebook)
        fields = [*(reader.fieldnames or ()), *columns]
        for row in rows:
            scores = cell_scores(gradebook, row["assignment"], row["student_id"])
            row.update({c: scores.get(c, 0.0) for c in columns})
        with dest.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields, restval=0.0)
            writer.writeheader()
            writer.writerows(rows)
        self.log.info("Added %d per-exercise columns to %s", len(columns), dest)
