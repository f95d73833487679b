"""grader drill: the answer parser, Leitner boxes, history and stats, scripted sessions, the release (no solutions/)."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.core.target import REPO_ROOT
from grader.drill import instances, quantities, rubric, select
from grader.drill.bank import examples
from grader.drill.store import Store, chart, topic_stats

GiB = 2**30


# ---- the modules: named for what they hold -----------------------------------------------------------------------

def test_drill_modules_are_named_for_what_they_hold() -> None:
    """quantities (the answer parser's units arithmetic) and solutions (the course's graded functions): the names
    ``units`` (the course's units are its lectures) and ``live`` are gone."""
    import importlib.util

    for gone in ("grader.drill.units", "grader.drill.live"):
        assert importlib.util.find_spec(gone) is None, f"{gone} still exists"
    from grader.drill import solutions

    assert quantities.parse("140 GB").value == 140e9
    assert solutions.available(examples.STATIC_MEMORY.solution)


# ---- the answer parser ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "value", "dimension"), [
    ("140 GB", 140e9, "bytes"), ("1.4e11", 1.4e11, None), ("130.4 GiB", 130.4 * GiB, "bytes"),
    ("38.4 days", 38.4 * 86400, "time"), ("3/19", 3 / 19, None), ("0.1579", 0.1579, None), ("2.5 ms", 2.5e-3, "time"),
    ("1.4×10^11 B", 1.4e11, "bytes"), ("400 Gbps", 50e9, "bandwidth"), ("989 TFLOPS", 989e12, "flop_rate"),
    ("2.038e19 FLOPs", 2.038e19, "flops"), ("15.79%", 0.1579, "ratio"), ("$2.5M", 2.5e6, "money"),
    ("238,419 steps", 238419, None), ("1120 Gb", 140e9, "bytes"), ("450 GB/s", 450e9, "bandwidth"),
    ("~48 s", 48, "time"), ("≈ 30.07 GB", 30.07e9, "bytes"), ("about 132 days", 132 * 86400, "time"),
])
def test_parse_reads_answers_as_people_type_them(typed, value, dimension) -> None:
    q = quantities.parse(typed)
    assert q is not None, f"parse({typed!r}) returned None"
    assert q.dimension == dimension and q.value == pytest.approx(value, rel=1e-9), q


@pytest.mark.parametrize(("typed", "kind"), [
    ("140 GB", "right"), ("130.4 GiB", "right"), ("1.4e11", "right"), ("0.14 TB", "right"), ("1120 Gb", "right"),
    ("140 GiB", "wrong_unit"),  # GiB typed for GB
    ("140 Gb", "wrong_unit"),  # bits for bytes
    ("140 ms", "wrong_unit"),  # a time for a size
    ("140", "wrong_unit"),  # the number of GB without the unit
    ("150 GB", "wrong_number"), ("14 GB", "wrong_number"), ("lots", "unparsed"),
])
def test_check_tells_a_wrong_unit_from_a_wrong_number(typed, kind) -> None:
    verdict = quantities.check(typed, 140e9, "B", 0.01, ("GB", "GiB", "TB", "B"))
    assert verdict.kind == kind, f"{typed!r} against 140 GB: {verdict}"


def test_check_fractions_percentages_times() -> None:
    assert quantities.check("3/19", 3 / 19, "ratio", 0.01).right
    assert quantities.check("15.79%", 3 / 19, "ratio", 0.01).right
    assert quantities.check("15.79", 3 / 19, "ratio", 0.01).kind == "wrong_unit"  # a percentage without its %
    assert quantities.check("2.5 ms", 2.5e-3, "s", 0.01, ("ms", "us")).right
    assert quantities.check("2.5 s", 2.5e-3, "s", 0.01, ("ms", "us")).kind == "wrong_unit"
    assert quantities.check("921.6 h", 38.4, "day", 0.01, ("days", "h")).right
    assert quantities.check("38.4", 38.4, "day", 0.01, ("days", "h")).right  # bare: the canonical unit
    assert quantities.check("40 days", 38.4, "day", 0.02, ("days",)).kind == "wrong_number"


def test_case_only_matters_where_it_changes_the_unit() -> None:
    assert quantities.check("130.4 GIB", 140e9, "B", 0.01).right
    assert quantities.check("38.4 Days", 38.4, "day", 0.01).right
    verdict = quantities.check("140 gb", 140e9, "B", 0.01, ("GB",))
    assert verdict.kind == "unparsed" and "GB or Gb" in verdict.message, verdict  # b is a bit: ask, do not guess


def test_tolerance_is_the_templates() -> None:
    assert quantities.check("141 GB", 140e9, "B", 0.01).right
    assert not quantities.check("141 GB", 140e9, "B", 0.001).right


def test_choice_and_order() -> None:
    opts = ("fits", "OOM")
    assert quantities.check_choice("b", opts, "OOM").right and quantities.check_choice("OOM", opts, "OOM").right
    assert not quantities.check_choice("a", opts, "OOM").right
    assert quantities.check_choice("z", opts, "OOM").kind == "unparsed"
    items = ("HBM", "L2", "registers")
    assert quantities.check_order("c b a", items, ["registers", "L2", "HBM"]).right
    assert quantities.check_order("3,2,1", items, ["registers", "L2", "HBM"]).right
    assert not quantities.check_order("a b c", items, ["registers", "L2", "HBM"]).right
    assert quantities.check_order("c c a", items, ["registers", "L2", "HBM"]).kind == "unparsed"


# ---- system-design rubric ---------------------------------------------------------------------------------------

def test_rubric_checks_numbers_and_keywords() -> None:
    points = examples.PLAN_405B.points
    good = "TP8 PP8 DP16, ZeRO-1: 30.1 GB static per GPU; 2.04e19 FLOPs per step, about 48 s per step."
    assert [rubric.check(p, good) for p in points if p.checkable] == [True] * 5
    bad = "TP16 PP1 DP64 with ZeRO-0: 80 GB per GPU, 2e18 FLOPs, 10 s per step."
    assert not any(rubric.check(p, bad) for p in points if p.checkable)
    assert all(rubric.check(p, good) is None for p in points if not p.checkable)  # self-scored


# ---- Leitner boxes: a missed template comes back sooner than a solved one ---------------------------------------

def _answer(store: Store, session: int, t, ok: bool) -> None:
    store.record(session, {"question": t.id, "kind": "numeric", "topic": t.topic, "correct": int(ok), "seconds": 3.0})


def test_a_missed_template_comes_back_sooner_than_a_solved_one(tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    missed, solved = examples.TRAINING_DAYS, examples.STATIC_MEMORY
    _answer(store, 1, missed, False)
    _answer(store, 1, solved, True)
    assert (store.card(missed.id).box, store.card(missed.id).due) == (1, 2)
    assert (store.card(solved.id).box, store.card(solved.id).due) == (2, 3)
    pool = [solved, missed]
    for seed in range(5):  # whatever the seed: the missed one first in session 2
        assert [t.id for t in select.pick(pool, store.cards(), 2, 2, random.Random(seed))] == [missed.id, solved.id]
    _answer(store, 2, missed, False)
    _answer(store, 2, solved, True)
    assert store.card(missed.id).due == 3 and (store.card(solved.id).box, store.card(solved.id).due) == (3, 6)
    assert select.pick(pool, store.cards(), 3, 1, random.Random(0))[0].id == missed.id
    _answer(store, 3, missed, True)  # solved at last: box 2, waits two sessions
    assert (store.card(missed.id).box, store.card(missed.id).due, store.card(missed.id).missed) == (2, 5, 2)
    new = examples.RING_ALLREDUCE
    assert select.pick([*pool, new], store.cards(), 4, 1, random.Random(0))[0].id == new.id  # nothing due: a new one


# ---- history: stats, chart, CSV ---------------------------------------------------------------------------------

def test_stats_weakest_first_and_csv(tmp_path) -> None:
    store = Store(tmp_path / "h.sqlite3")
    rows = [("memory", 1, 10.0), ("memory", 1, 20.0), ("flops", 0, 30.0), ("flops", 1, 50.0), ("flops", 0, 70.0)]
    for i, (topic, ok, s) in enumerate(rows):
        store.record(1, {"question": f"q{i}", "kind": "numeric", "topic": topic, "correct": ok, "seconds": s})
    stats = topic_stats(store.attempts())
    assert [(s.topic, s.correct, s.attempts, s.median_s) for s in stats] == [("flops", 1, 3, 50.0),
                                                                             ("memory", 2, 2, 15.0)]
    lines = chart(stats, width=10)
    assert "███░░░░░░░" in lines[0] and "33%" in lines[0] and "██████████" in lines[1]
    table = list(csv.DictReader(io.StringIO(store.export_csv())))
    assert len(table) == 5 and table[2]["topic"] == "flops" and table[2]["correct"] == "0"


# ---- the clock: --minutes stops new questions ---------------------------------------------------------------------

def test_minutes_stop_new_questions(tmp_path) -> None:
    from grader.drill import session

    ticks = iter(range(0, 10_000, 50))  # every look at the clock: 50 s later
    out = io.StringIO()
    run = session.Session(session.Options(n=10, minutes=3, seed=1), session.Scripted(["skip"] * 10, out),
                          Store(tmp_path / "h.sqlite3"), now=lambda: float(next(ticks)))
    report = run.run()
    assert 1 <= report["asked"] < 10 and "time is up for questions" in out.getvalue(), out.getvalue()[-500:]
    assert re.search(r"⏱ 0[1-9]:\d\d / 03:00", out.getvalue()), "the clock shows elapsed / limit"


# ---- sessions from an answers file ------------------------------------------------------------------------------

def _drill(cwd: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_DATA_HOME": str(data), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "grader", "drill", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_scripted_session_json_history_and_stats(tmp_path) -> None:
    answers = tmp_path / "answers.txt"
    answers.write_text("112 GB\n3 days\n\nq\n")
    proc = _drill(REPO_ROOT, tmp_path, "--n", "5", "--seed", "3", "--topic", "memory", "--answers", str(answers),
                  "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == "live" and report["asked"] == 3 and len(report["questions"]) == 3
    assert [q["answer"] for q in report["questions"]] == ["112 GB", "3 days", ""]
    assert report["questions"][1]["verdict"] == "wrong_unit" and report["questions"][2]["verdict"] == "skipped"
    assert (tmp_path / "dripstone" / "drill.sqlite3").is_file()
    stats = _drill(REPO_ROOT, tmp_path, "stats")
    assert "3 answers in 1 sessions" in stats.stdout and "memory" in stats.stdout, stats.stdout + stats.stderr
    exported = _drill(REPO_ROOT, tmp_path, "stats", "--export", "csv")
    assert exported.stdout.count("\n") == 4 and exported.stdout.startswith("session,"), exported.stdout


def test_build_writes_instances_that_serve_without_solutions(tmp_path, monkeypatch) -> None:
    path = tmp_path / "bank.json.gz"
    per_topic = instances.build(tuple(examples.TEMPLATES), 5, path)
    assert per_topic == {"memory": 1, "flops": 1, "communication": 1}
    assert instances.build(tuple(examples.TEMPLATES), 5, tmp_path / "again.json.gz") and \
        (tmp_path / "again.json.gz").read_bytes() == path.read_bytes(), "the same bank must give the same bytes"
    stored = instances.bank_data(path)
    monkeypatch.setenv("DRIPSTONE_DRILL_SOLUTIONS", str(tmp_path / "no-solutions"))
    monkeypatch.setattr(instances, "bank_data", lambda: stored)
    for t in examples.TEMPLATES:
        served = instances.draw(t, random.Random(1))
        assert served is not None and served.source == "bank"
        assert served.to_json() in stored[t.id] and len(stored[t.id]) == 5


def test_release_drill_serves_the_bank_without_solutions(tmp_path) -> None:
    from grader.instructor import release

    built = release.build(tmp_path / "rel")
    rel = built.out
    assert not (rel / "solutions").exists()
    assert (rel / "grader/drill/bank_data.json.gz").read_bytes() == instances.DATA_FILE.read_bytes()
    assert "drill:" in (rel / "Makefile").read_text()
    answers = tmp_path / "answers.txt"
    answers.write_text("1 GB\n" * 4)
    proc = _drill(rel, tmp_path / "data", "--n", "4", "--answers", str(answers), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == "bank" and report["asked"] == 4
    stored = instances.bank_data()
    for q in report["questions"]:
        served = [d["params"] for d in stored[q["question"]]]
        assert json.loads(json.dumps(q["params"])) in served, f"{q['question']}: not an instance of the bank data"
