"""What an instructor reads after a batch: the class per exercise, late submissions, feedback to hand out.

Written into OUT/ beside grades.csv (:func:`write`), from the ledger's grades and each student's results.json:

    OUT/summary.html               per exercise: mean, median, full marks, a histogram; the slowest students; problems
    OUT/junit.xml                  one testsuite per student, one testcase per test, its points and score as properties
    OUT/feedback/<student>.md      per student: the score per unit and exercise, each failed test with its message
    OUT/feedback/<student>.html    and hint, the problems found (the same text as HTML), ready to hand out

``summary.json`` gains ``exercises`` (the same statistics) and ``slowest``. Late rule (``--due``): a submission is
late when its time (the newest file's mtime, an archive's own) is after the due time; with ``--late-penalty P`` its
total loses P of itself per started day late (at most all of it), in the ``total_after_late`` column; the other
columns and results.json keep the score as graded.
"""

from __future__ import annotations

import html
import json
import math
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HISTOGRAM_BINS = 5  # score as a share of the exercise's points: [0, .2), [.2, .4), ... [.8, 1]
SLOWEST = 5
DAY_S = 86_400.0


@dataclass(frozen=True)
class Late:
    """The late rule of a batch: a due time (epoch seconds) and the share of the total lost per started day."""

    due: float
    penalty_per_day: float = 0.0

    def days(self, submitted: float | None) -> int:
        """Started days after the due time (0: on time; a submission without a time counts as on time)."""
        return 0 if submitted is None or submitted <= self.due else math.ceil((submitted - self.due) / DAY_S)

    def total_after(self, total: float, submitted: float | None) -> float:
        return round(total * max(0.0, 1.0 - self.penalty_per_day * self.days(submitted)), 6)


def exercise_points(manifest: Sequence[dict[str, Any]]) -> dict[str, float]:
    """``"<unit>:<exercise>"`` → its points, in the order the manifest meets them (pending-GPU tiers included)."""
    out: dict[str, float] = {}
    for t in manifest:
        key = f"{t['unit']}:{t['exercise']}"
        out[key] = out.get(key, 0.0) + float(t["points"])
    return out


def exercise_stats(graded: Sequence[Any], points: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Per exercise: mean, median, how many at full marks, and a histogram of score shares."""
    out = {}
    for key, pts in points.items():
        scores = [float(g.exercises.get(key, 0.0)) for g in graded]
        bins = [0] * HISTOGRAM_BINS
        for s in scores:
            share = s / pts if pts else 0.0
            bins[min(int(share * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
        out[key] = {"points": pts, "mean": round(statistics.fmean(scores), 4) if scores else 0.0,
                    "median": statistics.median(scores) if scores else 0.0,
                    "full_marks": sum(s >= pts for s in scores), "histogram": bins}
    return out


def slowest(graded: Sequence[Any], n: int = SLOWEST) -> list[dict[str, Any]]:
    return [{"student": g.student, "wall_s": round(g.wall_s, 1)}
            for g in sorted(graded, key=lambda g: -g.wall_s)[:n]]


def _histogram_html(bins: list[int]) -> str:
    top = max(bins) or 1
    bars = "".join(f"<span class='h' style='height:{4 + 36 * b / top:.0f}px' title='{b}'></span>" for b in bins)
    return f"<span class='hist'>{bars}</span> " + " ".join(str(b) for b in bins)


CSS = ("body{font-family:system-ui,'Noto Sans CJK SC','PingFang SC','Microsoft YaHei',sans-serif;margin:2em;"
       "max-width:1100px;color:#1f2328}table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:3px 10px;"
       "border-bottom:1px solid #d0d7de;text-align:left}th{background:#f6f8fa}.hist{display:inline-flex;"
       "align-items:flex-end;gap:2px;height:40px;vertical-align:bottom}.h{width:14px;background:#0969da}")


def summary_html(stats: dict[str, dict[str, Any]], graded: Sequence[Any], display: Any) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v['points']:g}</td><td>{v['mean']:g}</td><td>{v['median']:g}</td>"
        f"<td>{v['full_marks']}/{len(graded)}</td><td>{_histogram_html(v['histogram'])}</td></tr>"
        for k, v in stats.items())
    slow = "".join(f"<tr><td>{html.escape(display(s['student']))}</td><td>{s['wall_s']:g} s</td></tr>"
                   for s in slowest(graded))
    problems = "".join(f"<tr><td>{html.escape(display(g.student))}</td><td>{html.escape('; '.join(g.problems))}"
                       "</td></tr>" for g in graded if g.problems)
    totals = [g.score for g in graded]
    head = (f"<p>{len(graded)} students · mean total {statistics.fmean(totals):.2f} · median "
            f"{statistics.median(totals):g} of {graded[0].max_score:g}</p>") if graded else "<p>no student</p>"
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Batch summary</title>"
            f"<style>{CSS}</style></head><body><h1>Batch summary</h1>{head}<h2>Per exercise</h2><table><tr>"
            "<th>unit:exercise</th><th>points</th><th>mean</th><th>median</th><th>full marks</th>"
            f"<th>histogram (share of points, 5 bins)</th></tr>{rows}</table><h2>Slowest students</h2>"
            f"<table>{slow}</table><h2>Problems</h2><table>{problems or '<tr><td>none</td></tr>'}</table>"
            "</body></html>")


def junit_xml(students: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """One testsuite per student (its results.json), one testcase per test with ``points`` and ``score``."""
    root = ET.Element("testsuites", name="dripstone batch")
    for name, payload in students:
        tests = payload.get("tests", [])
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(tests)),
                              failures=str(sum(t.get("status") == "failed" for t in tests)))
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="score",
                      value=f"{payload.get('score', 0)}/{payload.get('max_score', 0)}")
        for t in tests:
            extra = t.get("extra_data", {})
            case = ET.SubElement(suite, "testcase", classname=f"{extra.get('unit', '')}.{extra.get('exercise', '')}",
                                 name=str(t.get("name", "")))
            props = ET.SubElement(case, "properties")
            for key in ("max_score", "score"):
                ET.SubElement(props, "property", name="points" if key == "max_score" else key, value=str(t.get(key)))
            if t.get("status") == "failed":
                ET.SubElement(case, "failure", message=str(t.get("output", "")).split("\n", 1)[0][:500]).text = \
                    str(t.get("output", ""))[:4000]
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def feedback_markdown(name: str, g: Any, payload: dict[str, Any], points: dict[str, float],
                      late: Late | None) -> str:
    lines = [f"# Feedback: {name}", "", f"Total: **{g.score:g} / {g.max_score:g}**"]
    if late is not None and late.days(g.submitted):
        lines.append(f"Late by {late.days(g.submitted)} started day(s): total after the late rule "
                     f"{late.total_after(g.score, g.submitted):g}")
    lines += ["", "| exercise | score | points |", "|---|---|---|"]
    lines += [f"| `{k}` | {g.exercises.get(k, 0.0):g} | {v:g} |" for k, v in points.items()]
    failed = [t for t in payload.get("tests", []) if t.get("status") == "failed"]
    if failed:
        lines += ["", "## What failed", ""]
        for t in failed:
            extra = t.get("extra_data", {})
            lines.append(f"- `{extra.get('unit')}` · `{extra.get('exercise')}` · {t.get('name')}")
            lines += [f"  > {line}" for line in str(t.get("output", "")).splitlines()[:8]]
    if g.problems:
        lines += ["", "## Problems found", ""] + [f"- {p}" for p in g.problems]
    return "\n".join(lines) + "\n"


def feedback_html(markdown: str) -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Feedback</title>"
            f"<style>{CSS}</style></head><body><pre>{html.escape(markdown)}</pre></body></html>")


def write(out: Path, graded: Sequence[Any], manifest: Sequence[dict[str, Any]], *, folder_of: Any, display: Any,
          late: Late | None = None) -> dict[str, Any]:
    """summary.html, junit.xml and feedback/ in ``out``; returns what summary.json adds."""
    points = exercise_points(manifest)
    stats = exercise_stats(graded, points)
    (out / "summary.html").write_text(summary_html(stats, graded, display), encoding="utf-8")
    payloads = []
    feedback = out / "feedback"
    feedback.mkdir(exist_ok=True)
    for g in graded:
        path = out / folder_of(g.student) / "results.json"
        payload = json.loads(path.read_text()) if path.is_file() else {}
        payloads.append((display(g.student), payload))
        text = feedback_markdown(display(g.student), g, payload, points, late)
        (feedback / f"{folder_of(g.student)}.md").write_text(text, encoding="utf-8")
        (feedback / f"{folder_of(g.student)}.html").write_text(feedback_html(text), encoding="utf-8")
    (out / "junit.xml").write_text(junit_xml(payloads), encoding="utf-8")
    return {"exercises": stats, "slowest": [{**s, "student": display(s["student"])} for s in slowest(graded)]}
