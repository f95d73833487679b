"""The grader decides, not the submission: the cheat corpus graded in one batch with honest students.

Each file of tests/grader/cheats/ is a submission for L23 built like a known implementation (the
solution with the file appended) and declares, as literals, ``ZERO`` (the exercises it attacks:
they must score 0), optionally ``MESSAGE`` (said in the attacked tests' messages), ``RAW`` (text
appended instead of the file, for a syntax error), ``DELETE`` (softmax.py removed) or ``UNIT_FILES`` (more files of the
unit, by path inside its folder: a sub-folder's helper). Every other
exercise of a cheat, and every test of the honest students, must score exactly what it scores when
graded alone; nothing in the submissions folder may change and nothing but the batch's own files
may appear in OUT.

One batch for the whole corpus (a single sandbox start per student, two at a time): the test is
slow (minutes) and runs where bwrap and root are available; elsewhere it says why it skipped.
Set DRIPSTONE_BATCH_HONEST=23 to grade the corpus mixed into a batch of 50 (the issue's measure).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from grader import api
from grader.authoring import known
from grader.core.target import REPO_ROOT
from grader.instructor import batch, sandbox
from grader.judge import plugin
from grader.tools import host

UNIT = "l23_online_softmax"
CHEATS = sorted((Path(__file__).parent / "cheats").glob("*.py"))
HONEST = int(os.environ.get("DRIPSTONE_BATCH_HONEST", "2"))
# A quick pass (batch --max-examples 5): the cheats are caught by the boundary, the audit and the guard, not by the
# 50th example, and the honest students' "alone" grading uses the same cap (the corpus is make test's longest file).
MAX_EXAMPLES = 5
LIMITS = sandbox.Limits(wall_s=900, call_timeout_s=10, max_examples=MAX_EXAMPLES)
NETWORK_PORT = 47823
# The exercises of softmax.py, which every cheat replaces: the unit's other files are not attacked.
EXERCISES = ("online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online")

pytestmark = pytest.mark.slow


def declarations(path: Path) -> dict[str, object]:
    tree = ast.parse(path.read_text())
    out: dict[str, object] = {"doc": ast.get_docstring(tree)}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper():
            with contextlib.suppress(ValueError):
                out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def build_cheat(path: Path, dest: Path) -> Path:
    decl = declarations(path)
    shutil.copytree(REPO_ROOT / "solutions" / UNIT, dest / UNIT, ignore=shutil.ignore_patterns("__pycache__"))
    module = dest / UNIT / "softmax.py"
    if decl.get("DELETE"):
        module.unlink()
    else:
        extra = decl["RAW"] if "RAW" in decl else path.read_text()
        module.write_text(module.read_text() + f"\n\n# ---- cheat {path.stem} ----\n{extra}")
    for rel, text in dict(decl.get("UNIT_FILES") or {}).items():  # type: ignore[call-overload]
        (dest / UNIT / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / UNIT / rel).write_text(text)
    return dest


def honest_students(dest: Path) -> dict[str, Path]:
    """Full marks, and partly right (an online kernel without the rescale), HONEST of them in all."""
    wrong = known.read(REPO_ROOT / "tests" / UNIT / "known_wrong" / "online_no_rescale.py")
    out = {}
    for i in range(HONEST):
        name = f"honest_{i:02d}_{'partial' if i % 2 else 'full'}"
        if i % 2:
            out[name] = known.build_target(wrong, dest / name)
        else:
            out[name] = shutil.copytree(
                REPO_ROOT / "solutions", dest / name, ignore=shutil.ignore_patterns("__pycache__")
            )
    return out


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def results_of(out: Path, student: str) -> dict[str, dict[str, object]]:
    data = json.loads((out / student / "results.json").read_text())
    return {t["name"]: t for t in data["tests"]}


def scores_by_name(report) -> dict[str, float]:
    return {
        f"{r.unit} · {r.exercise} · {r.tier} · {r.name}": r.score
        for r in report.results
        if r.status.value != "pending_gpu"
    }


@pytest.fixture(scope="module")
def local_service():
    """A service outside the sandbox the network cheat tries to reach."""
    server = socket.socket()
    try:
        server.bind(("127.0.0.1", NETWORK_PORT))
    except OSError:
        server.close()
        yield None
        return
    server.listen()
    threading.Thread(target=lambda: [c.close() for c, _ in iter(server.accept, None)], daemon=True).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def corpus_batch(tmp_path_factory, bwrap_runtime, local_service):
    root = tmp_path_factory.mktemp("corpus")
    subs, out = root / "submissions", root / "out"
    subs.mkdir()
    for cheat in CHEATS:
        build_cheat(cheat, subs / cheat.stem)
    honest = honest_students(subs)
    before = tree_digest(subs)
    report = batch.run_batch(batch.BatchOptions(subs, out, jobs=2, units=(UNIT,), exercises=EXERCISES, limits=LIMITS))
    by_kind = {}
    os.environ[plugin.MAX_EXAMPLES_ENV] = str(MAX_EXAMPLES)
    try:
        for name, path in honest.items():
            kind = name.rsplit("_", 1)[1]
            by_kind[kind] = by_kind.get(kind) or api.grade(path, units=[UNIT], exercises=EXERCISES)
    finally:
        del os.environ[plugin.MAX_EXAMPLES_ENV]
    alone = {"solutions": by_kind["full"], **by_kind}
    return {"out": out, "subs": subs, "report": report, "before": before, "honest": honest, "alone": alone}


def test_corpus_is_large_enough_and_documented():
    assert len(CHEATS) >= 55  # the hostile review's floor: every class, three variants or more
    for cheat in CHEATS:
        decl = declarations(cheat)
        assert decl["doc"] and decl.get("ZERO"), f"{cheat.name}: a docstring naming the attack and ZERO = [...]"


def test_every_student_graded_once(corpus_batch):
    out = corpus_batch["out"]
    lines = (out / "done.jsonl").read_text().splitlines()
    names = [json.loads(line)["student"] for line in lines]
    expected = sorted([c.stem for c in CHEATS] + list(corpus_batch["honest"]))
    assert sorted(names) == expected
    rows = (out / "grades.csv").read_text().splitlines()
    assert len(rows) == 1 + len(expected)


@pytest.mark.parametrize("cheat", CHEATS, ids=lambda p: p.stem)
def test_cheat_scores_zero_on_what_it_attacks(corpus_batch, cheat):
    """ZERO exercises score 0 (saying MESSAGE where declared), every other one exactly as honest."""
    decl = declarations(cheat)
    got = results_of(corpus_batch["out"], cheat.stem)
    honest = scores_by_name(corpus_batch["alone"]["solutions"])
    attacked = [t for t in got.values() if t["extra_data"]["exercise"] in decl["ZERO"]]
    assert attacked, f"{cheat.stem}: no test of {decl['ZERO']} was reported"
    scored = {t["name"]: t["score"] for t in attacked if t["score"]}
    assert not scored, f"{cheat.stem} ({decl['doc']}) scored on what it attacks: {scored}"
    if "MESSAGE" in decl:
        said = [t["output"] for t in attacked if str(decl["MESSAGE"]).lower() in t["output"].lower()]
        assert said, f"{cheat.stem}: no attacked test says {decl['MESSAGE']!r}: {attacked[0]['output'][:300]}"
    others = {n: t["score"] for n, t in got.items() if t["extra_data"]["exercise"] not in decl["ZERO"]}
    differ = {n: (s, honest.get(n)) for n, s in others.items() if s != honest.get(n)}
    assert not differ, f"{cheat.stem}: exercises it does not attack lost or gained points: {differ}"


def test_honest_students_score_exactly_as_alone(corpus_batch):
    alone = corpus_batch["alone"]
    for name in corpus_batch["honest"]:
        got = {n: t["score"] for n, t in results_of(corpus_batch["out"], name).items()}
        assert got == scores_by_name(alone[name.rsplit("_", 1)[1]]), f"{name} scored differently than alone"


# The classes of issue 13 that attack the machine rather than the grading: the judge's import path (a learner file
# dropped where the judge might import it) and starving the other students (setsid'd spinners, fork bombs).
PAYLOAD_MARK = "DRIPSTONE-PAYLOAD-RAN"  # what a judge_import_* cheat's dropped files print if anything runs them


def test_there_are_three_cheats_of_each_machine_class():
    for prefix in ("judge_import_", "starve_", "flood_"):
        assert len([c for c in CHEATS if c.stem.startswith(prefix)]) >= 3, (prefix, [c.stem for c in CHEATS])


def test_what_the_learner_controls_stays_capped_in_the_output(corpus_batch):
    """Class R3.9: the flood_* cheats raise, print, warn and return megabytes of text; every text of a result stays
    within its cap (results.TEXT_CAPS), so each student's results.json is bounded by its number of tests, the log by
    batch.LOG_CAP_BYTES, and the feedback and the class summary by the same caps."""
    from grader.core.results import TEXT_CAPS

    out = corpus_batch["out"]
    per_test = sum(TEXT_CAPS.values()) + 8_192  # the capped texts, the record and the fields around them
    for student in [c.stem for c in CHEATS] + list(corpus_batch["honest"]):
        data = json.loads((out / student / "results.json").read_text())
        tests = data["tests"]
        assert (out / student / "results.json").stat().st_size <= len(tests) * per_test + 65_536, student
        for test in tests:  # Gradescope's output: the message, detail and hint (each capped) and the record
            assert len(test["output"]) <= per_test, (student, test["name"], len(test["output"]))
        assert (out / student / "log.txt").stat().st_size <= batch.LOG_CAP_BYTES + 4_096, student
    biggest = max(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert biggest <= 8 << 20, sorted((p.stat().st_size, str(p)) for p in out.rglob("*") if p.is_file())[-3:]


def test_no_learner_file_is_ever_run_by_a_judge_and_no_late_import(corpus_batch):
    out = corpus_batch["out"]
    for student in [c.stem for c in CHEATS] + list(corpus_batch["honest"]):
        log = (out / student / "log.txt").read_text(errors="replace")
        assert PAYLOAD_MARK not in log, f"{student}: a judge ran a learner's file:\n{log[-2000:]}"
        late = [line for line in log.splitlines() if line.startswith(sandbox.LATE_IMPORT.split("{}")[0])]
        assert not late, f"{student}: add these to sandbox.THIRD_PARTY_PRELOAD: {late}"


def test_nothing_of_a_student_outlives_the_batch(corpus_batch, bwrap_runtime):
    """No process of a job uid is left, and no student cgroup: checked for every slot no other batch holds now
    (`make test` runs other batches beside this one; a slot's lock is what makes its uid and cgroup a job's)."""
    checked = 0
    for slot in range(batch.MAX_SLOTS):
        with batch._first_free([str(slot)]) as free:
            if free is None:
                continue  # another batch's job holds it: its processes are that job's
            checked += 1
            left = subprocess.run(["ps", "-eo", "uid=,pid=,args="], capture_output=True, text=True).stdout
            strays = [line for line in left.splitlines() if int(line.split()[0]) == host.UID_BASE + slot]
            assert not strays, f"processes of job uid {host.UID_BASE + slot} outlived the batch: {strays[:5]}"
            parents = bwrap_runtime.cgroups.parents
            groups = [parent / f"slot{slot}" for parent in parents if (parent / f"slot{slot}").exists()]
            assert not groups, f"student cgroups left behind: {groups}"
    assert checked, "every job slot is held by another batch: nothing could be checked"


def test_submissions_untouched_and_output_clean(corpus_batch):
    assert tree_digest(corpus_batch["subs"]) == corpus_batch["before"]
    out = corpus_batch["out"]
    students = {c.stem for c in CHEATS} | set(corpus_batch["honest"])
    top = {p.name for p in out.iterdir()}
    assert top == students | {"done.jsonl", "grades.csv", "summary.json", "manifest.json", "summary.html", "junit.xml",
                              "feedback"}
    for name in students:
        assert {p.name for p in (out / name).iterdir()} == {"results.json", "log.txt"}
