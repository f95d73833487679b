"""Drill history in SQLite under the user's data directory, and Leitner boxes for spaced repetition.

``$XDG_DATA_HOME/dripstone/drill.sqlite3`` (default ``~/.local/share/dripstone/``). Every answer is a row
of ``attempts``; every question has a card in a Leitner box 1-5. A missed question goes back to box 1 and
is due in the next session; a solved one moves up a box and waits 2, 4, 8, 16 sessions (a new question
starts in box 1: solved the first time, it goes to box 2). Sessions are
counted, not days: a candidate who drills twice a day and one who drills once a week see the same order.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.i18n import _, pad

BOXES = 5
WAIT = {1: 1, 2: 2, 3: 4, 4: 8, 5: 16}  # sessions until a card in this box is due again

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY, started REAL, ended REAL, mode TEXT, seed INTEGER,
                                     source TEXT);
CREATE TABLE IF NOT EXISTS attempts (id INTEGER PRIMARY KEY, session INTEGER, question TEXT, kind TEXT, topic TEXT,
    difficulty INTEGER, prompt TEXT, params TEXT, answer TEXT, expected TEXT, verdict TEXT, correct INTEGER,
    seconds REAL, at REAL, auto_points INTEGER, auto_total INTEGER, self_points INTEGER, self_total INTEGER,
    detail TEXT);
CREATE TABLE IF NOT EXISTS cards (question TEXT PRIMARY KEY, box INTEGER, due INTEGER, seen INTEGER, missed INTEGER);
"""
CSV_FIELDS = ("session", "at", "question", "kind", "topic", "difficulty", "correct", "verdict", "seconds", "answer",
              "expected", "auto_points", "auto_total", "self_points", "self_total")
# the export adds the question's text, in the learner's language (rendered again from the template and parameters)
EXPORT_FIELDS = (*CSV_FIELDS, "prompt")


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dripstone"


def db_path() -> Path:
    return data_dir() / "drill.sqlite3"


@dataclass(frozen=True)
class Card:
    question: str
    box: int
    due: int
    seen: int
    missed: int


class Store:
    """The history database (one connection; every write commits, so a killed session keeps what it recorded)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # --- sessions and attempts ---------------------------------------------------------------------------
    def start_session(self, mode: str, seed: int, source: str) -> int:
        cur = self.db.execute("INSERT INTO sessions (started, mode, seed, source) VALUES (?, ?, ?, ?)",
                              (time.time(), mode, seed, source))
        self.db.commit()
        assert cur.lastrowid is not None
        return cur.lastrowid

    def end_session(self, session: int) -> None:
        self.db.execute("UPDATE sessions SET ended = ? WHERE id = ?", (time.time(), session))
        self.db.commit()

    def record(self, session: int, row: dict[str, Any]) -> None:
        """One answer; numeric and choice rows move the question's card (designs too: correct = half the rubric)."""
        cols = ("question", "kind", "topic", "difficulty", "prompt", "params", "answer", "expected", "verdict",
                "correct", "seconds", "auto_points", "auto_total", "self_points", "self_total", "detail")
        values = [row.get(c) for c in cols]
        values = [json.dumps(v) if isinstance(v, dict | list) else v for v in values]
        marks = ", ".join("?" * len(cols))
        self.db.execute(f"INSERT INTO attempts (session, at, {', '.join(cols)}) VALUES (?, ?, {marks})",
                        (session, time.time(), *values))
        self.move(row["question"], bool(row["correct"]), session)
        self.db.commit()

    # --- Leitner boxes -----------------------------------------------------------------------------------
    def card(self, question: str) -> Card | None:
        r = self.db.execute("SELECT question, box, due, seen, missed FROM cards WHERE question = ?",
                            (question,)).fetchone()
        return Card(*r) if r else None

    def cards(self) -> dict[str, Card]:
        return {r[0]: Card(*r) for r in self.db.execute("SELECT question, box, due, seen, missed FROM cards")}

    def move(self, question: str, correct: bool, session: int) -> Card:
        old = self.card(question)
        box = min((old.box if old else 1) + 1, BOXES) if correct else 1  # a new card starts in box 1
        new = Card(question, box, session + WAIT[box], (old.seen if old else 0) + 1,
                   (old.missed if old else 0) + (not correct))
        self.db.execute("INSERT OR REPLACE INTO cards VALUES (?, ?, ?, ?, ?)",
                        (new.question, new.box, new.due, new.seen, new.missed))
        return new

    def session_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]

    # --- stats -------------------------------------------------------------------------------------------
    def attempts(self) -> list[dict[str, Any]]:
        cur = self.db.execute(f"SELECT {', '.join(CSV_FIELDS)} FROM attempts ORDER BY id")
        return [dict(zip(CSV_FIELDS, r, strict=True)) for r in cur]

    def export_csv(self) -> str:
        """Every answer, its question and expected answer in the learner's language (the other columns are the same
        in both: numbers, ids, topic and verdict codes)."""
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, lineterminator="\n")
        w.writeheader()
        cols = (*CSV_FIELDS, "prompt", "params")
        for r in self.db.execute(f"SELECT {', '.join(cols)} FROM attempts ORDER BY id"):
            row = dict(zip(cols, r, strict=True))
            row["prompt"] = question_text(row["question"], row.pop("params"), row["prompt"])
            row["expected"] = expected_text(row["kind"], row["expected"])
            w.writerow(row)
        return out.getvalue()


def question_text(question: str | None, params: Any, stored: str | None) -> str:
    """A recorded question in the learner's language: its template rendered again from the recorded parameters, a
    system design's prompt through the catalog; the recorded text (through the catalog) where neither works: a row
    of an older history (its text in the language of that session), a template renamed or changed since."""
    from grader.drill import bank

    try:
        p = json.loads(params) if isinstance(params, str) else params
    except ValueError:
        p = None
    if p and isinstance(p, dict):
        t = next((t for t in bank.all_templates() if t.id == question), None)
        if t is not None:
            try:
                return t.render(p)
            except Exception:  # parameters that no longer fit the template: the recorded text
                pass
    d = next((d for d in bank.all_designs() if d.id == question), None)
    if d is not None:
        return _(d.prompt)
    return _(stored) if stored else ""


def expected_text(kind: str | None, expected: str | None) -> str:
    """A recorded expected answer as the learner reads it: a choice's option (English in the history) and an
    ordering's items through the catalog; a number with its unit as it is."""
    if not expected:
        return expected or ""
    if kind == "choice":
        return _(expected)
    if kind == "order":
        return " > ".join(_(item) for item in expected.split(" > "))
    return expected


@dataclass(frozen=True)
class TopicStats:
    topic: str
    attempts: int
    correct: int
    median_s: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.attempts if self.attempts else 0.0


def topic_stats(rows: Iterable[dict[str, Any]]) -> list[TopicStats]:
    """Accuracy and median answer time per topic, weakest (lowest accuracy, then slowest) first."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["topic"], []).append(r)
    stats = [TopicStats(t, len(rs), sum(1 for r in rs if r["correct"]), statistics.median(r["seconds"] for r in rs))
             for t, rs in by.items()]
    return sorted(stats, key=lambda s: (s.accuracy, -s.median_s, s.topic))


def chart(stats: list[TopicStats], width: int = 30) -> list[str]:
    """A terminal bar chart of accuracy per topic."""
    lines = []
    for s in sorted(stats, key=lambda s: s.topic):
        full = round(s.accuracy * width)
        name = _(s.topic)
        lines.append(f"  {pad(name, 13)}  {'█' * full}{'░' * (width - full)} {s.accuracy:4.0%}  " +
                     _("{correct}/{attempts}, median {median} s").format(correct=s.correct, attempts=s.attempts,
                                                                       median=f"{s.median_s:.0f}"))
    return lines
