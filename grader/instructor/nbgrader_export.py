"""``nbgrader export`` for a Dripstone course: nbgrader's CSV, then one column per exercise.

The course's ``nbgrader_config.py`` selects this plugin. nbgrader's own CSV plugin writes its rows
first (same columns, same values); this one appends ``<notebook>/<grade cell>`` columns read from the
gradebook: one per autograder cell, so one per unit and exercise. Loaded by nbgrader only.
"""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin


def cell_columns(gradebook: Gradebook) -> list[str]:
    """``<notebook>/<cell>`` of every graded cell, by assignment, notebook, then cell name."""
    return [
        f"{nb.name}/{cell.name}"
        for a in gradebook.assignments
        for nb in a.notebooks
        for cell in sorted(nb.grade_cells, key=lambda c: c.name)
    ]


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
