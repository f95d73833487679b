"""The learner's commands besides grade: hint, progress, report (in a real headless browser), run and watch."""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from rich.console import Console

from grader import api
from grader.core.results import GradeReport, Status, TestResult, Tier
from grader.core.stubs import BEGIN, END
from grader.core.target import REPO_ROOT
from grader.learner import hints, history, progress, replay, report, watch

# Every unit with solutions is hinted: a new unit without a HINTS.toml fails the hint test below.
HINTED_UNITS = tuple(u for u in api.all_units() if (REPO_ROOT / "solutions" / u).is_dir())

# ---- hint ---------------------------------------------------------------------------------------------------------


def _solution_lines(unit: str) -> list[str]:
    """The code lines of ``unit``'s solution regions (Python and CUDA), stripped; trivial ones left out."""
    lines = []
    for path in sorted((REPO_ROOT / "solutions" / unit).iterdir()):
        if path.suffix not in (".py", ".cu"):
            continue
        inside = False
        for line in path.read_text().splitlines():
            if BEGIN in line or END in line:
                inside = BEGIN in line
                continue
            code = line.split("#")[0].split("//")[0].strip()
            if inside and len(code) >= 12:
                lines.append(code)
    return lines


@pytest.fixture(scope="module")
def hinted_exercises() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for t in api.manifest(HINTED_UNITS):
        if t["exercise"] not in found.setdefault(str(t["unit"]), []):
            found[str(t["unit"])].append(str(t["exercise"]))
    return found


@pytest.mark.parametrize("unit", HINTED_UNITS)
def test_every_exercise_has_three_hint_levels_without_solution_code(unit, hinted_exercises):
    written = hints.read_hints(REPO_ROOT / "solutions" / unit / hints.HINTS_FILE)
    missing = [e for e in hinted_exercises[unit] if sorted(written.get(e, {})) != [1, 2, 3]]
    assert not missing, f"{unit}: exercises without levels 1, 2 and 3 in HINTS.toml: {missing}"
    assert not set(written) - set(hinted_exercises[unit]), f"{unit}: hints for exercises that do not exist"
    code = _solution_lines(unit)
    for exercise, levels in written.items():
        assert levels[1].rstrip().endswith("?"), f"{unit}:{exercise} level 1 should ask a question"
        for n, text in levels.items():
            leaked = [c for c in code if c in text]
            assert not leaked, f"{unit}:{exercise} level {n} quotes the solution: {leaked}"
            assert "`" not in text and not re.search(r"\w\(.*\)\s*[:;{]", text), (
                f"{unit}:{exercise} level {n} looks like code: keep hints in words")
    assert (REPO_ROOT / "exercises" / unit / hints.HINTS_FILE).read_text() == (
        REPO_ROOT / "solutions" / unit / hints.HINTS_FILE).read_text(), "run `python -m grader stubs`"


def test_hint_levels_are_shown_one_more_at_a_time():
    h = hints.find("23:softmax_fused")
    one, three = hints.render(h, 1), hints.render(h, 3)
    assert "1. (a question)" in one and "2." not in one and "make hint L=l23 E=softmax_fused LEVEL=2" in one
    assert all(f"{n}. " in three for n in (1, 2, 3)) and "more:" not in three
    with pytest.raises(api.GraderError, match="did you mean 'softmax_fused'"):
        hints.find("23:softmax_fusde")


# ---- progress -----------------------------------------------------------------------------------------------------


def _result(unit: str, exercise: str, status: Status, score: float, points: float = 2.0) -> TestResult:
    return TestResult(nodeid=f"tests/{unit}/t.py::test_{exercise}", unit=unit, exercise=exercise,
                      tier=Tier.CORRECTNESS, points=points, status=status, score=score, message=f"{exercise}: why")


def test_history_merges_runs_and_progress_says_what_next(tmp_path):
    last = tmp_path / "last.json"
    history.save(GradeReport("exercises", (_result("l01_cpp_python", "list_vs_tensor_bytes", Status.PASSED, 2.0),
                                           _result("l02_ai_math", "to_bytes", Status.PASSED, 2.0),
                                           _result("l02_ai_math", "lora_params", Status.TODO, 0.0))), last)
    history.save(GradeReport("exercises", (_result("l12_roofline", "ridge_point", Status.FAILED, 0.0),)), last)
    saved, updated = history.load("exercises", last)
    assert len(saved.results) == 4 and updated
    assert [r.unit for r in history.last_run("exercises", last).results] == ["l12_roofline"]
    rows = progress.course_progress(saved, api.all_units())
    by = {r.unit: r for r in rows}
    assert (by["l02_ai_math"].score, by["l02_ai_math"].exercises_done, by["l02_ai_math"].status) == (2, 1, "started")
    assert by["l08_transformer_ops"].status == "not graded yet"
    assert by["l23_online_softmax"].lecture.startswith(progress.COURSE_URL)
    out = io.StringIO()
    progress.render(rows, saved, updated, Console(file=out, width=200))
    text = out.getvalue()
    assert "next: l02_ai_math · lora_params (TODO)" in text, "the first unit in course order that is not done"
    assert "23_经典算子优化" in progress.lecture_title(by["l23_online_softmax"].lecture)


# ---- report -------------------------------------------------------------------------------------------------------

TRAFFIC = {"traffic": [{"bytes_loaded": 32000, "bytes_stored": 32000, "launches": 1, "kernels": ["k"],
                        "tensors": [{"name": "x_ptr", "desc": "8×1000 float32", "bytes": 32000},
                                    {"name": "y_ptr", "desc": "8×1000 float32", "bytes": 32000}]}]}
MATMUL = {"traffic": [{"bytes_loaded": 3 * 200 * 100 * 2, "bytes_stored": 200 * 150 * 2, "launches": 1,
                       "kernels": ["mm"], "tensors": [{"name": "a", "desc": "200×100 float16", "bytes": 40000},
                                                      {"name": "b", "desc": "100×150 float16", "bytes": 30000},
                                                      {"name": "c", "desc": "200×150 float16", "bytes": 60000}]}]}


def _report() -> GradeReport:
    def eff(unit, exercise, record):
        return TestResult(nodeid=f"tests/{unit}/t.py::test_{exercise}_traffic", unit=unit, exercise=exercise,
                          tier=Tier.EFFICIENCY, points=3, status=Status.PASSED, score=3, record=record)

    return GradeReport("exercises", (_result("l23_online_softmax", "softmax_fused", Status.PASSED, 2.0),
                                     eff("l23_online_softmax", "softmax_fused", TRAFFIC),
                                     eff("l24_gemm", "matmul", MATMUL),
                                     _result("l24_gemm", "tile_intensity", Status.FAILED, 0.0)))


def test_kernel_points_count_flops_over_the_bytes_counted():
    points = {p.exercise: p for p in report.kernel_points(_report())}
    mm = points["matmul"]
    assert mm.flops == 2 * 200 * 100 * 150 and mm.ledger == 130000
    assert mm.intensity == pytest.approx(6e6 / (120000 + 60000)) and mm.ledger_intensity > mm.intensity
    assert points["softmax_fused"].flops == 5 * 8000


def test_report_page_is_self_contained_with_a_roofline_per_kernel():
    html = report.page(_report(), _report(), gpu="A100-80G", when="now")
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="roofline"') == 2
    assert html.count('class="bars"') == 2
    assert "ridge 10 FLOP/B" in html and "ridge 153 FLOP/B" in html  # A100: fp32 19.5 / 2.039, fp16 312 / 2.039
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "Course progress" in html and "next:</b> l24_gemm · tile_intensity" in html


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_report_renders_in_a_headless_browser_without_console_errors(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report.page(_report(), _report(), when="now"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 4 and "<circle" in dom.stdout and "Scoreboard" in dom.stdout
    assert "Uncaught" not in dom.stderr and "CONSOLE" not in dom.stderr, dom.stderr[-2000:]
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000, "the screenshot is (nearly) empty"


# ---- run and watch ------------------------------------------------------------------------------------------------

WRONG_RIDGE = "def ridge_point(peak_flops, mem_bw):\n    print('peak', peak_flops)\n    return mem_bw / peak_flops\n"


def _wrong_l12(root: Path) -> Path:
    target = root / "target"
    shutil.copytree(REPO_ROOT / "solutions" / "l12_roofline", target / "l12_roofline")
    path = target / "l12_roofline" / "roofline.py"
    tree = ast.parse(path.read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "ridge_point")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:fn.lineno - 1]) + WRONG_RIDGE + "".join(lines[fn.end_lineno:]))
    return target


@pytest.mark.slow
def test_run_replays_one_case_with_its_inputs_and_prints(tmp_path):
    target = _wrong_l12(tmp_path)
    listed = replay.replay("12:ridge_point", target=target)
    out = io.StringIO()
    chosen = replay.show(listed, 0, Console(file=out, width=200))
    assert chosen is not None and chosen.status is Status.FAILED
    text = out.getvalue()
    assert "case  1" in text and "last call of your code: ridge_point(" in text and "your prints" in text
    assert "peak " in text
    one = replay.replay("l12_roofline:ridge_point", 2, target=target)
    assert len(one.results) == 1 and one.results[0].nodeid == listed.results[1].nodeid


def test_watch_sees_a_save_and_names_what_the_file_defines(tmp_path):
    folder = tmp_path / "l12_roofline"
    folder.mkdir()
    mod = folder / "roofline.py"
    mod.write_text("def ridge_point(a, b):\n    return a / b\n")
    before = watch.snapshot(folder)
    (folder / ".backup").mkdir()
    (folder / ".backup" / "roofline.1.py").write_text("old")
    assert watch.changed(before, watch.snapshot(folder)) == [], "backups are not the learner's edits"
    time.sleep(0.01)
    mod.write_text("def ridge_point(a, b):\n    return b / a\n")
    assert watch.changed(before, watch.snapshot(folder)) == [mod]
    assert watch.exercises_in(mod, ["ridge_point", "attainable_flops"]) == ["ridge_point"]


@pytest.mark.slow
def test_watch_grades_a_saved_exercise_and_reports_the_latency(tmp_path):
    target = _wrong_l12(tmp_path)
    cmd = [sys.executable, "-m", "grader", "watch", "12", "ridge_point", "--target", str(target), "--max-runs", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with tempfile.TemporaryFile("w+") as log:
        child = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            log.seek(0)
            if "save a file" in log.read():
                break
            time.sleep(0.2)
        path = target / "l12_roofline" / "roofline.py"
        path.write_text(path.read_text() + "\n# saved\n")
        assert child.wait(timeout=300) == 0
        log.seek(0)
        text = log.read()
    m = re.search(r"verdict (\d+\.\d) s after the save", text)
    assert m and float(m.group(1)) < 120, text[-2000:]
    assert "FAIL" in text and "ridge_point" in text and "→" in text, "the first failure and its hint"


def test_report_shows_each_cu_kernels_bank_conflicts_per_line():
    """Issue 34: the conflict count of a learner's .cu kernel, per line and degree, in `make report`."""
    banks = {"kernel": "flash_fwd", "lines": [
        {"line": 41, "kind": "read", "degree": 32, "count": 64, "requests": 64, "wavefronts": 2048, "arrays": ["Ks"],
         "text": "s += Qs[r][k] * Ks[c][k];"},
        {"line": 30, "kind": "write", "degree": 1, "count": 0, "requests": 8, "wavefronts": 8, "arrays": ["Ks"],
         "text": "Ks[r][c] = k[i];"}]}
    run = GradeReport("exercises", (TestResult(
        nodeid="tests/c3_attention_capstone/t.py::test_k_tile_reads_are_conflict_free", unit="c3_attention_capstone",
        exercise="flash_fwd", tier=Tier.EFFICIENCY, points=4, status=Status.FAILED, score=0.0,
        message="K-tile reads: 32-way", record={"bank_conflicts": banks}),))
    html = report.page(run, run, when="now")
    assert "Shared-memory bank conflicts" in html and "flash_fwd" in html
    assert "s += Qs[r][k] * Ks[c][k];" in html and ">32</td><td>64/64</td>" in html and ">1</td><td>0/8</td>" in html


def test_watch_shows_each_parametrized_case_and_pending_points_as_grade_does():
    """Issue 35: watch listed a parametrized test twice (its [id] eaten as markup) and showed `pending GPU 0/2`
    where grade shows `–/2`."""
    from grader.learner import watch

    def result(name: str, status: Status, tier: Tier = Tier.CORRECTNESS) -> TestResult:
        return TestResult(nodeid=f"tests/l12_roofline/t.py::{name}", unit="l12_roofline", exercise="ridge_point",
                          tier=tier, points=2, status=status, score=2 if status is Status.PASSED else 0)

    run = GradeReport("exercises", (result("test_rejects[args0-peak_flops]", Status.PASSED),
                                    result("test_rejects[args1-mem_bw]", Status.PASSED),
                                    result("test_speed", Status.PENDING_GPU, Tier.GPU_PERF)))
    out = io.StringIO()
    watch.render(run, Console(file=out, width=200, color_system=None), header="x")
    text = out.getvalue()
    assert "test_rejects[args0-peak_flops]" in text and "test_rejects[args1-mem_bw]" in text
    assert "–/2  test_speed" in text and "0/2  test_speed" not in text


def test_watch_and_replay_status_words_line_up_in_chinese(monkeypatch):
    """The status column is padded in terminal columns: 通过 and 评分器错误 take 4 and 10 columns, not 2 and 5."""
    from grader.i18n import columns
    from grader.learner import watch

    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    run = GradeReport("exercises", (_result("l12_roofline", "ridge_point", Status.PASSED, 2.0),
                                    _result("l12_roofline", "roofline", Status.ERROR, 0.0),
                                    _result("l12_roofline", "intensity", Status.TODO, 0.0)))
    for show in (lambda c: watch.render(run, c, header="x"), lambda c: replay.show(run, 0, c)):
        out = io.StringIO()
        show(Console(file=out, width=200, color_system=None))
        rows = [line for line in out.getvalue().splitlines() if re.search(r"^  \S.* correctness ", line)]
        assert len(rows) >= 3, out.getvalue()
        starts = {columns(line[:line.index("correctness")]) for line in rows}
        assert len(starts) == 1, rows
